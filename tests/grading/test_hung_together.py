"""Instances alive at once that hang, where each alone was quick, are a finding (H.timeout), not inconclusive.

An outside attacker hid a real H.instances bug (the pending batch in a module global) by spinning forever whenever
another instance's batch was pending: only the two-instance probes and the groups meet that, their time-outs were
inconclusive, and the rest of the run, skipped after too many time-outs, cost nothing. The bug alone scored 98.72;
hidden, 100.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.grading.observe import Observations
from conformance.sandbox.run import SKIPPED_AFTER_HANGS
from conformance.sandbox.types import WorkloadResult
from spec.model import Config
from spec.trace import Request, make_workload

W = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 1)])
IMPL = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"


def edited(text: str, *edits: tuple[str, str]) -> str:
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def planted(dest: Path) -> Path:
    """Write the bug (the pending batch in a module global, shared by every instance: H.instances) and the same
    bug hidden (spinning forever whenever another instance's batch is pending, which only the two-instance probes
    and the groups meet) into `dest`, each a copy of impl/scheduler.py with its edits."""
    bug = edited(IMPL.read_text(),
                 ("\n\nclass Scheduler:\n", "\n\n_PENDING = [None]\n\n\nclass Scheduler:\n"),
                 ("        self._batch = batch\n        return batch.copy()\n",
                  "        self._batch = batch\n        _PENDING[0] = batch\n        return batch.copy()\n"),
                 ("        self._batch = None\n        running = self.running\n",
                  "        self._batch = None\n        batch = _PENDING[0]\n        running = self.running\n"))
    hidden = edited(bug,
                    ("_PENDING = [None]\n", "_PENDING = [None]\n_OWNER = [None]\n"),
                    ("        if self._batch is not None:\n            pending = ",
                     "        if _PENDING[0] is not None and self._batch is None and _OWNER[0] is not self:\n"
                     "            while True:\n                pass\n        _OWNER[0] = self\n"
                     "        if self._batch is not None:\n            pending = "),
                    ("        batch = _PENDING[0]\n", "        batch = _PENDING[0]\n        _PENDING[0] = None\n"))
    dest.mkdir()
    (dest / "global_batch.py").write_text(bug)
    (dest / "global_batch_spin.py").write_text(hidden)
    return dest


def judged(together: WorkloadResult, alone_seconds: float = 0.01) -> object:
    results = [WorkloadResult(0, "", "ok", "ok", seconds=alone_seconds), together,
               WorkloadResult(2, "", "ok", "ok", seconds=alone_seconds)]
    return Observations((W, W, W), results, limit=2).hung_together(1, [0, 2], "with a second instance")


SPUN = WorkloadResult(1, "", "cpu_limit", "cpu_limit: workload 1 used more than 2 s of CPU time", limit="cpu")
BLOCKED = WorkloadResult(1, "", "timeout", "timeout: workload 1 made no progress for 2 s", limit="idle")


def test_a_hang_beside_another_instance_where_each_was_quick_alone_is_a_time_out_finding():
    found = judged(SPUN)
    assert found is not None and found.rule == "H.timeout" and "each instance's run alone finished" in found.message
    assert found == judged(SPUN, alone_seconds=0.02), \
        "the finding's words hold no measured time: a regrade gives the same report"
    assert judged(BLOCKED) == found, "waiting on the other instance, nothing running, is a hang of the instances"
    killed = judged(WorkloadResult(1, "", "signal", "signal: the process was killed by SIGKILL during workload 1"))
    assert killed == found, "the hard CPU limit's SIGKILL"
    skipped = judged(WorkloadResult(1, "", "not_run", f"{SKIPPED_AFTER_HANGS} 16 runs timed out"))
    assert skipped is not None and skipped.rule == "H.timeout" and "skipped after 16 runs" in skipped.message


def test_a_hang_of_a_large_run_is_judged_under_the_limit_that_run_had():
    """A run of 512 requests or more may take more CPU (Limits.cpu_for): its hang is judged, and named, by that."""
    big = make_workload(Config(600, 1, 600, 600), [Request(f"a{i}", 1, 1) for i in range(600)])
    results = [WorkloadResult(0, "", "ok", "ok", seconds=0.2), SPUN, WorkloadResult(2, "", "ok", "ok", seconds=0.2)]
    found = Observations((big, big, big), results, limit=2).hung_together(1, [0, 2], "with a second instance")
    assert found is not None and "(4 s of CPU)" in found.message, found  # 8 x 0.4 > 2, but not > 4
    assert judged(SPUN, alone_seconds=0.2) is None  # a run of one request: 2 s


SPENT = "the submission's total budget for all its runs (4 s of CPU, 100 restarts after a crash or timeout) was spent"


def test_a_slow_submission_or_a_spent_wall_clock_budget_stays_inconclusive():
    assert judged(SPUN, alone_seconds=0.2) is None  # 8 x 0.4 > 2
    assert judged(WorkloadResult(1, "", "not_run", f"not_run: {SPENT}", limit="deadline")) is None
    assert judged(WorkloadResult(1, "", "ok", "ok")) is None


def test_a_run_of_instances_the_submissions_cpu_budget_left_no_time_is_a_time_out():
    """Only the submission's own work spends its CPU budget: spent just where its instances first meet, it hid their
    bug (an inconclusive run passes), so such a run counts as a time-out, as the submission's own runs do."""
    for result, said in ((WorkloadResult(1, "", "not_run", f"not_run: {SPENT}", limit="budget"), "not reached"),
                         (WorkloadResult(1, "", "timeout", f"timeout: {SPENT}; workload 1 was stopped",
                                         limit="budget"), "cut short")):
        found = judged(result)
        assert found is not None and found.rule == "H.timeout" and f"did not run to its end: {said}: " in \
            found.message, found
        assert judged(result, alone_seconds=0.5) == found, "however long its instances alone took"


@pytest.mark.parametrize("why", ["wall", "run", "deadline"])
def test_a_run_stopped_by_a_wall_clock_is_inconclusive_as_a_loaded_machine_stops_quick_runs_too(why):
    """A correct wire program's interleaved 2,052-step run was stopped by the run's wall clock on a loaded 2-core
    machine (its instances together spent 0.49 s of CPU, alone 0.44 s): H.timeout, 99.99, on a correct program."""
    from conformance.sandbox.record import Run, stopped
    from conformance.sandbox.run import prepare
    from conformance.sandbox.types import Limits

    run = Run(SimpleNamespace(level="namespaces"), Limits(workload_cpu_seconds=2), [prepare(W)] * 2)
    stopped(run, 1, why, 0.49, 30.0)
    assert run.results[1].hung and not run.results[1].hung_by_itself
    assert judged(run.results[1]) is None
    stopped(run, 1, "cpu", 2.1, 2.2)
    assert judged(run.results[1]) is not None


@pytest.mark.long
def test_hiding_an_instances_bug_behind_a_hang_scores_below_the_bug_alone(tmp_path, monkeypatch):
    from conformance.cli import main

    monkeypatch.setenv("SCHEDCHECK_HELD_OUT_SEED", "1")
    out = tmp_path / "out"
    main(["grade", str(planted(tmp_path / "class")), "--out", str(out), "--jobs", "1"])
    score = {p.parent.name: float(re.search(r'"score": ([0-9.]+)', p.read_text())[1])
             for p in out.glob("*/results.json")}
    assert score["global_batch"] < 100 and score["global_batch_spin"] <= score["global_batch"], score


@pytest.mark.long
def test_check_finds_the_hidden_bug_as_grade_does(tmp_path, monkeypatch):
    """`check` meets the hang where grade does, beside a second instance, and judges it alike: H.timeout where each
    instance alone was quick (it was inconclusive, so the two commands disagreed on this bug). Its limit cut to 2 s."""
    from conformance.adapters import load_target
    from conformance.checks import history
    from conformance.checks.history import instances

    monkeypatch.setattr(history, "RUN_SECONDS", 2.0)
    folder = planted(tmp_path / "class")
    spin, plain = load_target(str(folder / "global_batch_spin.py")), load_target(str(folder / "global_batch.py"))
    w = make_workload(Config(8, 2, 2, 8), [Request("a1", 3, 2), Request("a2", 2, 2)])
    found = instances(w, spin)
    assert [f.rule for f in found] == ["H.timeout"] and "(2 s of CPU)" in found[0].message, found
    again = instances(w, spin)  # the copy the two hung in is dropped, as the sandbox starts a fresh child: the
    assert [f.rule for f in again] == ["H.timeout"], again  # second instance alone no longer hangs on its globals
    assert [f.rule for f in instances(w, plain)] == ["H.instances"]  # unhidden, the same bug is found as it is
    assert instances(w, load_target(str(IMPL))) == []
