"""Adapters load a submission by path or module name; load failures are usage errors with a fix."""

import pytest

from conformance.adapters import LoadError, load_target
from conformance.drivers import run_workload
from spec.golden import case_named


def test_missing_file_is_a_load_error_that_says_what_to_pass():
    with pytest.raises(LoadError, match="no such file"):
        load_target("mine/nothing_here.py")


def test_a_module_without_the_api_names_is_a_load_error(tmp_path):
    p = tmp_path / "empty.py"
    p.write_text("X = 1\n")
    with pytest.raises(LoadError, match="Scheduler"):
        load_target(str(p))


def test_a_submission_that_fails_to_import_is_a_load_error(tmp_path):
    p = tmp_path / "broken.py"
    p.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(LoadError, match="boom"):
        load_target(str(p))


def test_dotted_module_name_and_white_box_snapshot():
    factory = load_target("conformance/mutants/reference_scheduler.py")
    obs = run_workload(case_named("example1").workload, factory)
    assert obs["note"] is None
    assert obs["steps"][0]["after_update"]["blocks_used"] == 3


def test_the_custom_adapter_example_is_white_box_with_num_computed_before_the_step():
    factory = load_target("examples/vllm_style/engine.py", "examples/vllm_style/adapter.py")
    w = case_named("example2").workload
    obs = run_workload(w, factory)
    assert obs["error"] is None and obs["note"] is None
    assert [s["schedule"] for s in obs["steps"]] == [[["a1", 2], ["a2", 3]], [["a1", 1]], [["a1", 1]], [["a2", 4]]]
    spec = run_workload(w, load_target("spec"))  # the engine advances num_computed in schedule(); the adapter not
    assert [s["after_schedule"] for s in obs["steps"]] == [s["after_schedule"] for s in spec["steps"]]


def test_an_adapter_without_white_box_access_gives_a_note_not_a_failure(tmp_path):
    p = tmp_path / "black_box_adapter.py"
    p.write_text("from conformance.adapters import SpecAdapter\n"
                 "class Black(SpecAdapter):\n    missing = 'the engine keeps no per-request block count'\n"
                 "    def snapshot(self):\n        return None\n"
                 "def open_target(target):\n    return Black\n")
    obs = run_workload(case_named("example2").workload, load_target("spec", str(p)))
    assert obs["error"] is None
    assert obs["note"] == "white-box checks skipped: the engine keeps no per-request block count"


def test_adapter_file_without_open_target_is_a_load_error(tmp_path):
    p = tmp_path / "adapter.py"
    p.write_text("X = 1\n")
    with pytest.raises(LoadError, match="open_target"):
        load_target("spec", str(p))


def test_the_canonical_adapter_keeps_every_returned_value_with_a_copy_from_return_time():
    made = []
    factory = load_target("conformance/mutants/reference_scheduler.py")
    run_workload(case_named("example1").workload, lambda c, s: made.append(factory(c, s)) or made[-1])
    [sut] = made
    assert [(r.step, r.call) for r in sut.returned] == [(1, "schedule"), (1, "update"), (2, "schedule"),
                                                        (2, "update"), (3, "schedule"), (3, "update")]
    first = sut.returned[0]
    assert first.copy == [("a1", 6), ("a2", 2)] and first.value == dict(first.copy)
    [(seq, fields)] = sut.returned[3].fields  # a3 finished at step 2: the object itself and its fields then
    assert seq is sut.seqs["a3"] and fields == {"num_computed": 3, "num_blocks": 0, "status": "FINISHED",
                                                "output": [300]}


@pytest.mark.long
def test_the_target_as_typed_carries_the_adapter_so_rerun_hints_work(tmp_path):
    """The hint after a finding (`schedcheck replay TRACE <target as typed>`) must name the adapter too."""
    import argparse
    import shlex
    import subprocess
    import sys

    from conformance.wire import cli as wire

    args = argparse.Namespace(path="examples/vllm_style/engine.py", adapter="examples/vllm_style/adapter.py",
                              wire=None, wire_timeout=None)
    target, adapter, typed = wire.target_from_args(args)
    assert (target, adapter) == (args.path, args.adapter) and typed.endswith("--adapter " + args.adapter)
    traces = tmp_path / "traces"
    subprocess.run([sys.executable, "-m", "conformance", "check", "conformance/mutants/phase2_continue.py",
                    "--profile", "quick", "--trace-dir", str(traces)], capture_output=True, check=False)
    trace = sorted(traces.glob("*.json"))[0]
    done = subprocess.run([sys.executable, "-m", "conformance", "replay", str(trace), *shlex.split(typed)],
                          capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr  # a verdict, not a usage error
