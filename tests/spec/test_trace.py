"""The workload/trace JSON format (docs/trace-format.md) and the explain command."""

import json

import pytest

from conformance.cli import main as cli
from spec import Config, InvalidWorkload, Request, make_workload, run_workload
from spec.golden import case_named
from spec.trace import FORMAT_VERSION, trace_to_json, workload_from_json, workload_to_json


def test_workload_json_round_trips():
    w = make_workload(Config(7, 2, 3, 5, eos=0), [Request("x", 3, 4, 1), Request("y", 2, 2, 3)],
                      eos_at={"x": [1]}, name="w", tags=["eos", "arrivals"])
    assert workload_from_json(json.loads(json.dumps(workload_to_json(w)))) == w


def test_trace_json_carries_version_workload_and_every_step():
    trace = trace_to_json(run_workload(case_named("example2").workload))
    assert trace["format"] == "schedcheck/trace" and trace["version"] == FORMAT_VERSION
    assert trace["rules"] == "p07-rules/1"
    assert [s["schedule"] for s in trace["steps"]] == [[["a1", 2], ["a2", 3]], [["a1", 1]], [["a1", 1]], [["a2", 4]]]
    assert trace["steps"][1]["after_schedule"]["waiting"] == ["a2"]
    assert trace["steps"][0]["sampled"] == [["a1", 100], ["a2", 200]]
    assert [e["rule"] for e in trace["steps"][1]["events"]][:3] == ["P1.preempt", "P1", "P2.stop"]
    assert workload_from_json(trace) == case_named("example2").workload


def test_arrivals_join_at_their_step():
    w = make_workload(Config(100, 4, 8, 64), [Request("a", 2, 3, 1), Request("b", 2, 1, 3)])
    steps = run_workload(w).steps
    assert [s.added for s in steps[:3]] == [("a",), (), ("b",)]
    assert steps[2].batch == (("a", 1), ("b", 2))


def test_idle_steps_before_a_late_arrival_are_recorded():
    w = make_workload(Config(100, 4, 8, 64), [Request("a", 1, 1, 3)])
    assert [s.batch for s in run_workload(w).steps] == [(), (), (("a", 1),)]


@pytest.mark.parametrize(("mutate", "match"), [
    (lambda o: o["config"].update(block_size="4"), r"workload.config.block_size must be an int, got '4'"),
    (lambda o: o["requests"][0].pop("prompt_len"), r"workload.requests\[0\]: missing field 'prompt_len'"),
    (lambda o: o["sample"]["base"].update(zz=1), r"workload.sample.base\['zz'\] = 1"),
    (lambda o: o["sample"]["eos_at"].update(a1=[-1]), r"eos_at\['a1'\] = \[-1\]"),
    (lambda o: o.update(version=99), r"workload.version is 99"),
    (lambda o: o["config"].update(eos=1.5), r"config.eos must be an int or null, got 1.5"),
])
def test_bad_workload_json_names_the_field_and_value(mutate, match):
    obj = workload_to_json(case_named("example1").workload)
    mutate(obj)
    with pytest.raises(InvalidWorkload, match=match):
        workload_from_json(obj)


def test_eos_positions_need_an_eos_token():
    with pytest.raises(InvalidWorkload, match="config.eos is None"):
        make_workload(Config(10, 2, 2, 8), [Request("a", 1, 2)], eos_at={"a": [0]})


def test_explain_prints_the_card_table_with_reasons(capsys):
    assert cli(["explain", "example2"]) == 0
    out = capsys.readouterr().out
    assert "{a1: 2, a2: 3}" in out and "P1.preempt" in out and "preempt a2 = running[-1]" in out
    assert "a1 = [100, 101, 102], a2 = [200, 201]" in out


def test_explain_reads_and_writes_json(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert cli(["explain", "self_preemption", "--json", str(out)]) == 0
    capsys.readouterr()
    assert cli(["explain", str(out), "--no-events"]) == 0
    assert "P1.skip_self" not in capsys.readouterr().out


def test_explain_rejects_an_unknown_case_with_the_known_ones(capsys):
    assert cli(["explain", "example9"]) == 2
    assert "known cases: budget16, example1" in capsys.readouterr().err
