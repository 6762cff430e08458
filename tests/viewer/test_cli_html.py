"""--html on check and replay writes the counterexample as a viewer page, opened at its first divergence."""

from pathlib import Path

import pytest

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[2]
VECTOR = ROOT / "conformance/workloads/data/counterexamples/victim_first.golden.json"


def divergent_steps(page: str) -> list[str]:
    return [part.split('"')[0] for part in page.split('class="step diverges" id="step-')[1:]]


def test_replay_writes_the_page_of_the_failing_run(tmp_path):
    out = tmp_path / "r.html"
    assert main(["replay", str(VECTOR), str(ROOT / "conformance/mutants/victim_first.py"), "--html", str(out)]) == 1
    page = out.read_text()
    assert divergent_steps(page) and 'class="badge">first divergence' in page and "FAIL" in page
    assert main(["replay", str(VECTOR), "impl", "--html", str(out)]) == 0
    assert divergent_steps(out.read_text()) == []


@pytest.mark.long
def test_check_writes_the_page_of_the_shown_counterexample(tmp_path, capsys):
    out = tmp_path / "c.html"
    assert main(["check", str(ROOT / "examples/p07_buggy/p07_scheduler.py"), "--quiet", "--html", str(out)]) == 1
    assert f"wrote {out}" in capsys.readouterr().out
    assert divergent_steps(out.read_text())[0] == "2"


def test_view_shows_a_run_recorded_elsewhere_from_its_observed_trace_and_names_a_wrong_field(tmp_path, capsys):
    """An observed trace on disk (an engine's run, written by conformance.observed Observed.to_json) is drawn
    beside the spec without running anything; one that is not of the format is refused with the field."""
    import json

    from conformance.adapters import load_target
    from conformance.drivers import run_workload
    from conformance.observed import Observed
    from spec.trace import load_workload

    w = load_workload(str(VECTOR))
    recorded = Observed.from_json(run_workload(w, load_target(str(ROOT / "conformance/mutants/victim_first.py"))))
    trace, out = tmp_path / "run.json", tmp_path / "v.html"
    trace.write_text(json.dumps(recorded.to_json()))
    assert main(["view", str(trace), "--html", str(out)]) == 0
    assert divergent_steps(out.read_text()), "the recorded run differs from the spec, and the page shows where"
    bad = recorded.to_json()
    bad["steps"][0]["finished"] = "a1"
    trace.write_text(json.dumps(bad))
    assert main(["view", str(trace), "--html", str(out)]) == 2
    assert "$.steps[0].finished must be an array, got 'a1'" in capsys.readouterr().err


def test_view_refuses_a_small_file_asking_for_a_run_of_a_billion_steps_and_any_workload_the_spec_refuses(tmp_path,
                                                                                                          capsys):
    """A 200-byte workload (one arrival at step 10**9, or max_tokens 10**6) made the spec hold every step: killed at
    60 s with 2 to 12 GB; a request that can never fit raised a traceback from inside the page (outside attacker)."""
    import json

    from spec.model import Config
    from spec.trace import Request, make_workload, workload_to_json

    def file_of(*requests: Request, num_blocks: int = 8) -> str:
        path = tmp_path / "w.json"
        path.write_text(json.dumps(workload_to_json(make_workload(Config(num_blocks, 4, 2, 16), requests))))
        return str(path)

    for requests, said in (((Request("a1", 2, 2, arrival=10**9),), "at least 1,000,000,001 steps"),
                           ((Request("a1", 2, 10**6),), "at least 1,000,000 steps")):
        assert main(["view", file_of(*requests), "--html", str(tmp_path / "v.html")]) == 2
        assert said in capsys.readouterr().err
    assert main(["view", file_of(Request("a1", 100, 2), num_blocks=2), "--html", str(tmp_path / "v.html")]) == 2
    err = capsys.readouterr().err
    assert "can never be scheduled" in err and "Traceback" not in err
