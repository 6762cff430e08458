"""The sandbox against hostile submissions: it always returns, names the cause, and stays usable.

Each file in hostile/ is appended to impl/scheduler.py (a plain, list-based scheduler)
and patches one thing. Limits are tight so that every case is safe and quick on a 2-core machine.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from conformance import drivers
from conformance.adapters import load_target
from conformance.checks import checkers, whitebox
from conformance.grading.observe import observed_trace
from conformance.sandbox.isolation import works
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits, SandboxResult, WorkloadResult
from spec.model import Config
from spec.trace import Request, Workload, make_workload, run_workload, snapshot_to_json

HERE = Path(__file__).parent
CORRECT = HERE.parents[1] / "impl" / "scheduler.py"
TIGHT = Limits(workload_seconds=2.0, workload_cpu_seconds=2, startup_seconds=5.0, run_seconds=30.0,
               cpu_seconds=20, memory_bytes=256 << 20, processes=16, output_bytes=1 << 20)

SELF_PREEMPTION = make_workload(Config(3, 2, 8, 64), [Request("a1", 2, 3), Request("a2", 2, 3)],
                                name="self-preemption")
ARRIVALS = make_workload(Config(6, 2, 2, 5, eos=0), [Request("b1", 4, 3), Request("b2", 3, 4, arrival=2),
                                                    Request("b3", 2, 2, arrival=4)],
                         eos_at={"b2": [1]}, name="arrivals-and-eos")
WORKLOADS = [SELF_PREEMPTION, ARRIVALS]
# The defences behind the one-process filter (conformance/sandbox/oneproc.py), for a kernel that refuses it:
# RLIMIT_NPROC, the CPU of the whole tree, the sweeps. With the filter on, no hostile case here starts a process.
SWEPT = dataclasses.replace(TIGHT, one_process=False)


def hostile(name: str, tmp_path: Path) -> Path:
    """The correct scheduler with hostile/<name>.py appended: one patched behaviour each."""
    path = tmp_path / name / "p07_scheduler.py"
    path.parent.mkdir()
    path.write_text(CORRECT.read_text() + "\n\n" + (HERE / "hostile" / f"{name}.py").read_text())
    return path


def assert_matches_reference(workload: Workload, result: WorkloadResult) -> None:
    """The observed trace equals the reference model's, black box and white box."""
    assert result.status == "ok", result.cause
    ref = run_workload(workload)
    assert len(result.steps) == len(ref.steps)
    for got, want in zip(result.steps, ref.steps, strict=True):
        assert got["added"] == list(want.added)
        assert got["schedule"] == [list(p) for p in want.batch], f"step {want.step}"
        assert got["finished"] == list(want.finished)
        assert [[seq_id, token] for seq_id, _, token in got["sampled"]] == [list(p) for p in want.sampled]
        assert got["after_schedule"] == snapshot_to_json(want.after_schedule)
        assert got["after_update"] == snapshot_to_json(want.after_update)


def assert_still_correct() -> SandboxResult:
    result = run_in_sandbox(CORRECT, WORKLOADS, TIGHT)
    for workload, got in zip(WORKLOADS, result.workloads, strict=True):
        assert_matches_reference(workload, got)
    assert result.survivors == 0
    return result


def run_hostile(name: str, tmp_path: Path, limits: Limits = TIGHT) -> SandboxResult:
    result = run_in_sandbox(hostile(name, tmp_path), WORKLOADS, limits)
    budget = result.children * (limits.workload_cpu_seconds + 1.5) + 2  # CPU of the whole trees, not wall time
    assert result.cpu_seconds < budget, f"{name} used {result.cpu_seconds} s of CPU, more than its limits allow"
    assert result.survivors == 0, f"{result.survivors} processes of {name} outlived the run"
    return result


def test_correct_submission_matches_the_reference() -> None:
    result = assert_still_correct()
    assert result.children == 1 and result.load_error is None and result.notes == ()
    assert not result.stdout_truncated and result.causes() == []


def test_optimized_implementation_matches_the_reference_through_the_sandbox() -> None:
    result = run_in_sandbox(CORRECT, WORKLOADS, TIGHT)
    for workload, got in zip(WORKLOADS, result.workloads, strict=True):
        assert_matches_reference(workload, got)


@pytest.mark.parametrize(("name", "status", "words"), [
    ("infinite_loop", "cpu_limit", ["cpu_limit", "2 s of CPU time", "whole process tree"]),
    ("sleep_forever", "timeout", ["timeout", "no progress for 0.5 s", "sleeping"]),
    ("memory_bomb", "memory", ["MemoryError", "256 MB"]),
    ("sys_exit", "exception", ["SystemExit", "update"]),
    ("os_exit", "exit", ["code 7"]),
    ("base_exception", "exception", ["Meltdown", "the reactor is gone", "update"]),
    ("wrong_type", "protocol", ["must return a dict", "list"]),
    ("float_n", "protocol", ["must be an int", ".0 (float)"]),
    ("bool_n", "protocol", ["must be an int", "True", "bool"]),
    ("forge_report", "protocol", ["report for workload", "is malformed"]),
    ("segfault", "signal", ["killed by SIGSEGV"]),
    ("idle", "stalled", ["step cap", "the liveness bound"]),
])
def test_hostile_submission_is_contained_and_named(name: str, status: str, words: list[str], tmp_path: Path) -> None:
    result = run_hostile(name, tmp_path)
    for got in result.workloads:
        assert got.status == status, got.cause
        for word in words:
            assert word in got.cause, f"{word!r} not in {got.cause!r}"
    # one hang, exit or malformed report costs one workload, then a fresh child takes the next
    restarts = status in ("timeout", "cpu_limit", "exit", "signal") or name == "forge_report"
    assert result.children == (len(WORKLOADS) if restarts else 1)
    assert_still_correct()


@pytest.mark.parametrize(("name", "rule"), [("negative_n", "H.nonpositive"), ("unknown_id", "H.unknown_id")])
def test_a_count_below_one_or_an_unknown_id_is_judged_as_check_judges_it(name: str, rule: str,
                                                                        tmp_path: Path) -> None:
    """An int count <= 0 and an id never added are well-formed values: the run goes on and the checks judge them,
    in the grader as in `check`. The sandbox refused them as malformed (a protocol error, H.result_type) and
    stopped the run, so a chunk computed in floating point that came out 0 near 2^54 was blamed on hygiene's
    result type by grade and on I2 and H.nonpositive by check (from outside)."""
    result = run_hostile(name, tmp_path)
    (tmp_path / "check").mkdir()
    factory = load_target(str(hostile(name, tmp_path / "check")))
    for workload, got in zip(WORKLOADS, result.workloads, strict=True):
        assert got.status == "ok", got.cause
        graded = observed_trace(workload, got)
        checked = drivers.run_workload(workload, factory)
        assert graded["steps"] == checked["steps"]
        for observed in (graded, checked):
            [found] = checkers.hygiene(workload, observed)
            assert found.rule == rule and found.step == 1, found
        assert whitebox.invariants(workload, graded) == whitebox.invariants(workload, checked)


def test_a_module_that_writes_to_the_report_channel_while_imported_does_not_load(tmp_path: Path) -> None:
    result = run_hostile("forge_before_loaded", tmp_path)
    assert result.children == 1, "a fresh child was started for a module that breaks the protocol as it loads"
    assert result.load_error is not None and "report channel" in result.load_error and "'bye'" in result.load_error
    assert all(w.status == "load_error" for w in result.workloads), [w.status for w in result.workloads]
    assert_still_correct()


def test_cpu_limit_stops_a_busy_loop_before_the_wall_clock(tmp_path: Path) -> None:
    limits = Limits(workload_seconds=10.0, workload_cpu_seconds=1, startup_seconds=5.0, cpu_seconds=20,
                    memory_bytes=512 << 20, processes=16)
    result = run_in_sandbox(hostile("infinite_loop", tmp_path), [SELF_PREEMPTION], limits)
    assert result.workloads[0].status == "cpu_limit", result.workloads[0].cause
    assert "1 s of CPU time" in result.workloads[0].cause and result.workloads[0].seconds < 3  # CPU seconds


def test_fork_bomb_is_capped_and_leaves_nothing_behind(tmp_path: Path) -> None:
    result = run_hostile("fork_bomb", tmp_path, SWEPT)
    for got in result.workloads:
        assert got.status == "exception" and "RuntimeError" in got.cause, got.cause
        if result.isolation.non_root:  # RLIMIT_NPROC is enforced: the fork loop hit it
            assert "then BlockingIOError" in got.cause
            forked = int(got.cause.split("forked ")[1].split()[0])
            assert forked < TIGHT.processes
    assert_still_correct()


def marked(argv: bytes, uid: int | None = None) -> list[int]:
    """Processes running `argv`; with `uid` (a run's own, fresh per run), only that run's: another test
    running the same hostile case at the same time is not this run's survivor."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes() == argv and (uid is None or os.stat(f"/proc/{pid}").st_uid
                                                                       == uid):
                found.append(int(pid))
        except OSError:
            pass
    return found


def test_setsid_grandchild_does_not_survive(tmp_path: Path) -> None:
    result = run_hostile("setsid_grandchild", tmp_path, SWEPT)
    assert [w.status for w in result.workloads] == ["timeout", "timeout"]
    assert marked(b"sleep\x00913.25\x00", result.child_uid) == []
    assert_still_correct()


def test_output_flood_is_cut_at_the_byte_cap(tmp_path: Path) -> None:
    result = run_hostile("output_flood", tmp_path)  # run_hostile bounds its CPU by the limits
    assert result.stdout_truncated and len(result.stdout) == TIGHT.output_bytes
    assert result.output_bytes >= 100 << 20
    assert any("stdout truncated" in line for line in result.causes())
    for workload, got in zip(WORKLOADS, result.workloads, strict=True):
        assert_matches_reference(workload, got)  # printing breaks no rule


def test_lying_dict_is_read_by_its_real_contents(tmp_path: Path) -> None:
    result = run_hostile("lying_dict", tmp_path)
    first = result.workloads[0]
    assert first.steps, first.cause
    assert first.steps[0]["schedule"] == [["a1", 4], ["a2", 4]]  # the doubled real contents, not the shown batch
    assert first.steps[0]["schedule"] != [list(p) for p in run_workload(SELF_PREEMPTION).steps[0].batch]


def test_lying_output_lists_are_read_by_their_real_items(tmp_path: Path) -> None:
    """A list subclass whose __iter__, __getitem__ and __eq__ lie is read by its real items, never through its
    methods: its type is a note, not a protocol error. Those items are what the scheduler really holds: it
    wraps each output again after every update(), and that copy goes through the lying __iter__, so its
    tokens become zeros. The finding is on that behaviour (I4, tokens lost), as the reference shows."""
    result = run_hostile("replace_lists", tmp_path)
    for workload, got in zip(WORKLOADS, result.workloads, strict=True):
        assert got.status == "ok" and got.trace is not None, got.cause
        assert got.trace.notes == ("output is a LyingList (a list subclass, read by its list items); docs/api.md "
                                   "says list",)
        observed = observed_trace(workload, got)
        found = whitebox.invariants(workload, observed)
        assert found and found[0].rule == "I4" and "tokens were lost" in found[0].message, found
        assert "[0" in str(checkers.differential(workload, observed)[0].actual)  # the zeros it really holds


def test_monkeypatched_builtins_do_not_reach_the_harness(tmp_path: Path) -> None:
    result = run_hostile("monkeypatch_builtins", tmp_path)
    for workload, got in zip(WORKLOADS, result.workloads, strict=True):
        assert_matches_reference(workload, got)


def test_importing_the_reference_is_refused(tmp_path: Path) -> None:
    result = run_hostile("import_reference", tmp_path)
    assert result.load_error is not None and "refused" in result.load_error and "'spec'" in result.load_error
    assert result.refused_imports == () or "spec" in result.refused_imports
    assert all(w.status == "load_error" and "refused" in w.cause for w in result.workloads)
    assert_still_correct()


def test_results_json_written_by_the_child_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_hostile("results_json", tmp_path)
    for workload, got in zip(WORKLOADS, result.workloads, strict=True):
        assert_matches_reference(workload, got)
    assert not (tmp_path / "results.json").exists()
    assert not list(Path("/tmp").glob("schedcheck-sandbox-*/results.json"))


def test_other_submissions_results_are_intact(tmp_path: Path) -> None:
    before = run_in_sandbox(CORRECT, WORKLOADS, TIGHT)
    run_in_sandbox(hostile("os_exit", tmp_path), WORKLOADS, TIGHT)
    after = run_in_sandbox(CORRECT, WORKLOADS, TIGHT)
    assert [w.steps for w in before.workloads] == [w.steps for w in after.workloads]
    assert [w.status for w in before.workloads] == ["ok", "ok"]


@pytest.mark.long
@pytest.mark.parametrize("level", [pytest.param(level, marks=pytest.mark.skipif(
    not works(level), reason=f"the {level} level cannot start an interpreter on this machine (docs/sandbox.md)"))
    for level in ("namespaces", "process-group")])
@pytest.mark.parametrize(("name", "status"), [("setsid_grandchild", "timeout"), ("os_exit", "exit"),
                                              ("fork_bomb", "exception")])
def test_weaker_isolation_levels_still_contain_the_tree(level: str, name: str, status: str, tmp_path: Path) -> None:
    """Forced lower levels, as on machines without a PID namespace."""
    limits = dataclasses.replace(SWEPT, isolation=level)
    result = run_in_sandbox(hostile(name, tmp_path), [SELF_PREEMPTION], limits)
    assert result.isolation.level == level
    assert result.workloads[0].status == status, result.workloads[0].cause
    assert result.survivors == 0 and marked(b"sleep\x00913.25\x00", result.child_uid) == []
    correct = run_in_sandbox(CORRECT, [SELF_PREEMPTION], limits)
    assert_matches_reference(SELF_PREEMPTION, correct.workloads[0])


def test_one_hang_costs_one_workload(tmp_path: Path) -> None:
    result = run_hostile("hang_on_a1", tmp_path)
    assert [w.status for w in result.workloads] == ["timeout", "ok"]
    assert_matches_reference(ARRIVALS, result.workloads[1])
    assert result.children == 2


def test_daemon_left_at_import_dies_with_a_normal_run(tmp_path: Path) -> None:
    result = run_hostile("daemon_at_import", tmp_path, SWEPT)
    assert [w.status for w in result.workloads] == ["ok", "ok"]
    assert marked(b"sleep\x00913.5\x00", result.child_uid) == []


def test_whole_run_budget_marks_the_rest_not_run(tmp_path: Path) -> None:
    limits = dataclasses.replace(TIGHT, run_seconds=1.0)
    result = run_in_sandbox(hostile("infinite_loop", tmp_path), WORKLOADS, limits)
    assert [w.status for w in result.workloads] == ["timeout", "not_run"]
    assert "whole run's 1.0 s" in result.workloads[0].cause and "1.0 s" in result.workloads[1].cause


@pytest.mark.parametrize(("name", "words"), [
    ("import_loop", "timeout: importing the submission ran past its limits (1 s of CPU"),
    ("no_scheduler", "missing_api"),
])
def test_broken_module_is_a_load_error(name: str, words: str, tmp_path: Path) -> None:
    result = run_in_sandbox(hostile(name, tmp_path), WORKLOADS, dataclasses.replace(TIGHT, startup_seconds=1.0))
    assert result.load_error is not None and words in result.load_error
    assert [w.status for w in result.workloads] == ["load_error", "load_error"]


def test_missing_submission_file_is_a_load_error(tmp_path: Path) -> None:
    result = run_in_sandbox(tmp_path / "absent.py", WORKLOADS, TIGHT)
    assert result.load_error is not None and "cannot read the submission" in result.load_error
    assert result.children == 0


def test_project_tree_is_hidden_from_the_child(tmp_path: Path) -> None:
    """Bypassing the import hook by path finds nothing where the machine allows a mount namespace."""
    rules = Path(__file__).resolve().parents[2] / "spec" / "rules.py"
    path = tmp_path / "p07_scheduler.py"
    path.write_text(CORRECT.read_text() + f"\n_REFERENCE = open({str(rules)!r}).read()\n")
    result = run_in_sandbox(path, [SELF_PREEMPTION], TIGHT)
    if result.isolation.hides_project:
        assert result.load_error is not None and "FileNotFoundError" in result.load_error
    else:
        assert result.workloads[0].status == "ok"  # process-group level: documented as readable


@pytest.mark.bench
def test_sandbox_costs_at_most_twice_the_in_process_time() -> None:
    from conformance.sandbox.bench import corpus, measure

    overhead = measure(CORRECT, corpus(40))
    assert overhead.steps > 1000 and overhead.ratio <= 2.0, overhead


def test_extra_hidden_directory_is_empty_for_the_child(tmp_path: Path) -> None:
    secret = tmp_path / "other-submissions"
    secret.mkdir()
    (secret / "bob.py").write_text("ANSWER = 42\n")
    path = tmp_path / "p07_scheduler.py"
    peek = (f"\nimport os\n_SEEN = os.listdir({str(secret)!r}) if os.path.exists({str(secret)!r}) else []\n"
            "assert not _SEEN, _SEEN\n")
    path.write_text(CORRECT.read_text() + peek)
    result = run_in_sandbox(path, [SELF_PREEMPTION], dataclasses.replace(TIGHT, hide=(str(secret),)))
    if result.isolation.hides_project:  # absent from the fresh root, or covered where it lies in the runtime
        assert result.load_error is None and result.workloads[0].status == "ok", result.load_error
    else:
        assert result.load_error is not None and "bob.py" in result.load_error


EDGE_BURN = ("import time as _time\n_plain = Scheduler.schedule\n_burnt = []\n\n\ndef _burning(self):\n"
             "    if not _burnt:\n        _burnt.append(1)\n        _t = _time.process_time()\n"
             "        while _time.process_time() - _t < 1.08:\n            pass\n    return _plain(self)\n\n\n"
             "Scheduler.schedule = _burning\n")


@pytest.mark.long
def test_a_run_that_ends_just_past_its_cpu_limit_is_cut_every_time(tmp_path: Path) -> None:
    """1.08 s of CPU under a 1 s limit: the 0.2 s samples may all fall before the limit and the trace arrive
    before the next one. The cut is judged on the CPU used when the trace arrives too, so it never depends on
    when a sample fell (the same bytes got 99.89 and 99.76 before)."""
    path = tmp_path / "edge" / "p07_scheduler.py"
    path.parent.mkdir()
    path.write_text(CORRECT.read_text() + "\n\n" + EDGE_BURN)
    limits = dataclasses.replace(TIGHT, workload_cpu_seconds=1)
    for _ in range(3):
        result = run_in_sandbox(path, [SELF_PREEMPTION], limits)
        assert [w.status for w in result.workloads] == ["cpu_limit"], result.causes()
