"""A case whose run the budget never reached, or cut short, fails, but is never the counterexample handed out.

A submission slower than its budget loses the cases it did not get to run: that is the budget's point. Before, each
such case read "did not finish within its time limit (an endless loop, or far too slow)", and the smallest of them, a
case of one request never started, was the counterexample to replay: replayed, it passes. A case whose own run was
reached but whose fresh-dict probe run was not read "[H.fresh_dict] ... return a copy" in grade (a time-out in
check). And the confirmation on a fresh copy, run under the same spent budget, put a deterministic bug down to
process history: its counterexample said the failure needs earlier runs in the process.
"""

from __future__ import annotations

from pathlib import Path

from conformance.checks.checkers import Finding
from conformance.grading.confirm import confirmed
from conformance.grading.judge import limits_for
from conformance.grading.observe import Case, Observations
from conformance.grading.rubric import load_rubric
from conformance.grading.scoring import score_item
from conformance.sandbox.budget import submission_budget
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import PlannedRun, WorkloadResult
from spec.model import Config
from spec.trace import Request, Workload, make_workload

ROOT = Path(__file__).resolve().parents[2]
IMPL = ROOT / "impl" / "scheduler.py"
W = make_workload(Config(2, 1, 1, 2), [Request("a1", 1, 1), Request("a2", 1, 1)])  # one running at most
SPENT = "the submission's total budget for all its runs (4 s of CPU, 100 restarts after a crash or timeout) was spent"
NOT_RUN = WorkloadResult(1, "", "not_run", f"not_run: {SPENT}")
CUT = WorkloadResult(0, "", "timeout", f"timeout: {SPENT}; workload 0 was stopped", limit="budget")
RUBRIC = load_rubric()


def one_more_seq(dest: Path) -> Path:
    """impl/scheduler.py admitting one sequence past max_num_seqs: a bug every run of W shows, fresh copy or not."""
    text = IMPL.read_text()
    old = "            limit = self.max_num_seqs\n"
    assert text.count(old) == 1
    dest.write_text(text.replace(old, "            limit = self.max_num_seqs + 1\n"))
    return dest


def sandboxed(path: Path, runs: list[Workload | PlannedRun]) -> list[WorkloadResult]:
    result = run_in_sandbox(path, runs, limits_for(RUBRIC))
    assert result.load_error is None, result.load_error
    return list(result.workloads)


def scored(case: Case, view: Observations, verdict: dict[str, Finding | None],
           missed: dict[str, str]) -> str:
    item = next(i for i in RUBRIC.items if i.id == "differential")  # every case; differential, hygiene, liveness
    result = score_item(item, RUBRIC, (case,), [verdict], [missed], (view.results[0],), view)
    assert result.score == 0, result
    return result.output


def test_a_fresh_dict_probe_run_never_reached_fails_hygiene_as_a_time_out_and_replays_nothing():
    own, _ = sandboxed(IMPL, [W, PlannedRun(W, "mutate")])
    view = Observations((W, W), (own, NOT_RUN), 2)
    case = Case("v/probe-unreached", W, ("t",), mutated=1)
    verdict = view.judge(case, 0)
    found = verdict["hygiene"]
    assert found is not None and found.rule == "H.timeout", found  # not [H.fresh_dict] "return a copy"
    assert not any(f for c, f in verdict.items() if c != "hygiene"), verdict
    missed = view.not_reached(case, 0, verdict)
    assert missed == {"hygiene": f"not reached: {SPENT}"}, missed
    output = scored(case, view, verdict, missed)
    assert "`v/probe-unreached`: not reached: " in output, output
    assert "smallest failing case" not in output and "No failing case here can be replayed" in output, output


def test_a_case_whose_own_run_was_not_reached_or_cut_short_fails_without_a_counterexample():
    for result, said in ((NOT_RUN, "not reached"), (CUT, "cut short")):
        view = Observations((W,), (result,), 2)
        case = Case("v/own-unreached", W, ("t",))
        verdict = view.judge(case, 0)
        assert any(verdict.values()), verdict
        message = view[0]["error"]["message"]
        assert said in message and "endless loop" not in message, message
        output = scored(case, view, verdict, view.not_reached(case, 0, verdict))
        assert f"`v/own-unreached`: {said}: " in output, output
        assert "smallest failing case" not in output, output


def test_a_real_finding_beside_a_probe_run_never_reached_is_still_the_counterexample(tmp_path):
    bug = one_more_seq(tmp_path / "bug.py")
    own, _ = sandboxed(bug, [W, PlannedRun(W, "mutate")])
    view = Observations((W, W), (own, NOT_RUN), 2)
    case = Case("v/bug", W, ("t",), mutated=1)
    verdict = view.judge(case, 0)
    found = verdict["differential"]
    assert found is not None and found.rule.startswith("P2"), verdict
    missed = view.not_reached(case, 0, verdict)
    assert "differential" not in missed, missed
    output = scored(case, view, verdict, missed)
    assert "### The smallest failing case" in output and "P2" in output, output


def test_a_confirmation_run_the_budget_never_reached_leaves_the_failure_standing(tmp_path):
    """A deterministic bug is no process history because the fresh copy never got to run."""
    bug = one_more_seq(tmp_path / "bug.py")
    [own] = sandboxed(bug, [W])
    case = Case("v/bug", W, ("t",))
    verdict = Observations((W,), (own,), 2).judge(case, 0)
    assert verdict["differential"] is not None and verdict["differential"].rule != "H.history", verdict
    with submission_budget(4, 100) as budget:
        budget.cpu_used = 5.0  # spent by the runs before the confirmation
        again = confirmed(bug, limits_for(RUBRIC), [case], [W], [verdict])
    assert again == [verdict], again


def spinner(dest: Path) -> Path:
    """impl/scheduler.py whose schedule() spins forever: it spends whatever CPU it is given."""
    dest.write_text(IMPL.read_text() + "\n\ndef _spin(self):\n    while True:\n        pass\n\n\n"
                    "Scheduler.schedule = _spin\n")
    return dest


def test_a_budget_spent_on_cpu_is_the_submissions_own_and_one_spent_on_wall_time_the_machines(tmp_path):
    """The runs a budget stops or never reaches say which part ran out: its CPU (or its restarts), which only the
    submission's own work spends, or its wall time, which a loaded machine spends too (observe.hung_together
    counts the first as a time-out of instances together, and leaves the second inconclusive)."""
    spin = spinner(tmp_path / "spin.py")
    with submission_budget(0.3, 60):
        ran = run_in_sandbox(spin, [W, W], limits_for(RUBRIC)).workloads
    assert [(r.status, r.limit) for r in ran] == [("timeout", "budget"), ("not_run", "budget")], ran
    with submission_budget(60, 0.3):  # (a loaded machine may spend the 0.3 s before the first run starts)
        ran = run_in_sandbox(spin, [W, W], limits_for(RUBRIC)).workloads
    assert [r.limit for r in ran] == ["deadline", "deadline"] and ran[1].status == "not_run", ran
    assert ran[0].status in ("timeout", "not_run"), ran


def test_a_group_the_cpu_budget_never_reached_fails_hygiene_but_replays_nothing():
    """Schedulers alive at once, never run for the submission's CPU: a time-out (observe.hung_together), named as not
    reached and never the counterexample, like a pair's run (a slow correct scheduler was handed such a group as its
    replay: tests/grading/test_budget_order.py)."""
    w2 = make_workload(Config(3, 1, 1, 2), [Request("a1", 1, 1)])
    alone = sandboxed(IMPL, [W, w2])
    unreached = WorkloadResult(2, "", "not_run", f"not_run: {SPENT}", limit="budget")
    view = Observations((W, w2, W), (*alone, unreached), 2)
    case = Case("v/group-unreached", W, ("t",), lanes=(W, w2), group=2, lanes_alone=(0, 1))
    verdict = view.judge(case, 0)
    assert verdict["hygiene"] is not None and verdict["hygiene"].rule == "H.timeout", verdict
    assert view.not_reached(case, 0, verdict) == {"hygiene": f"not reached: {SPENT}"}
