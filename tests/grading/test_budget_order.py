"""A submission too slow for its CPU budget loses cases of each part in proportion, not every item at once.

The held-out cases count in every item (an item scores the lower of its public and held-out pass rates), and
they run after the public cases. When the public runs could spend the whole budget, a submission whose runs
outlasted it lost every held-out case, and with them every item: a correct submission that needs about the
budget scored 100 on one run and 0 on the next, as the machine's load moved the cut. The held-out runs now have
an allowance of their own beyond the budget, in proportion to their runs (conformance/sandbox/budget.py
topped_up); the public runs keep the whole budget, as before. And the cases run in a fixed shuffle
(conformance/grading/judge.py run_order), not family by family: a cut took most of one item's public cases and
few of another's, and an item's public and held-out parts were cut at different depths.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.grading.collect import collect
from conformance.grading.judge import grade_one
from conformance.grading.rubric import DEFAULT_RUBRIC, parse_rubric
from conformance.sandbox.budget import reserved, submission_budget, topped_up

ROOT = Path(__file__).resolve().parents[2]
BURN = 0.004  # CPU seconds each new Scheduler spends: about 14 s for a grade's 3,449 runs, past a 4 s budget


def test_the_held_out_runs_may_spend_their_share_of_the_budget_beyond_what_the_public_runs_left():
    with submission_budget(10, 100) as budget:
        budget.cpu_used = 9.0
        assert budget.left(0.9) and not budget.left(1.1)
        with topped_up(0.25):  # 1 s left, and 2.5 s more
            assert budget.left(3.4) and not budget.left(3.6)
        assert not budget.left(1.1)
        budget.cpu_used = 11.0  # the public runs' last child went past the budget before it was stopped
        with topped_up(0.25):
            assert budget.left(2.4) and not budget.left(2.6)
            assert "10 s of CPU and 3.5 s more for these runs" in budget.why()  # 1 s overdrawn, 2.5 s its own
    with submission_budget(10, 100) as budget:
        budget.cpu_used, budget.restarts_used = 11.0, budget.restarts + 1
        with topped_up(0.25):  # restarts, not CPU, ran out in the held-out runs: their runs are abandoned, not unrun
            assert budget.restarts_spent()
    with topped_up(0.5):  # outside a submission's budget: nothing to top up
        pass


def test_the_runs_before_the_reach_cases_leave_them_their_share_and_the_whole_budget_stays_the_same():
    with submission_budget(10, 100) as budget:
        with reserved(0.5):  # the reach runs' half
            assert budget.left(4.9) and not budget.left(5.1)
            budget.cpu_used = 3.0
            with topped_up(0.25):  # the held-out runs' allowance, inside: the reserve is kept
                assert budget.left(4.4) and not budget.left(4.6)
        assert budget.left(6.9) and not budget.left(7.1)  # after: what is left, the reserve included


@pytest.mark.long
def test_a_correct_submission_slower_than_its_budget_loses_about_the_same_share_of_each_part(tmp_path):
    impl = (ROOT / "impl" / "scheduler.py").read_text()
    slow = impl.replace("import enum\n", "import enum\nimport time as _time\n", 1).replace(
        "        self._batch: dict[str, int] | None = None\n",
        "        self._batch: dict[str, int] | None = None\n"
        f"        _end = _time.process_time() + {BURN}\n"
        "        while _time.process_time() < _end:\n"
        "            pass\n", 1)
    assert slow.count("_time.") == 2
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "slow.py").write_text(slow)
    rubric = parse_rubric(DEFAULT_RUBRIC.read_text().replace("run_seconds = 600.0", "run_seconds = 40.0"), "r")
    [entry] = collect(tmp_path / "subs", tmp_path / "work")
    # the CPU budget is what is cut here; the wall budget is a safety net, set far above it: with a tight one a
    # loaded machine (the long suite's other worker grading beside it) spent it in the public runs, held-out 0.0
    with submission_budget(rubric.limits.run_seconds / 10, rubric.limits.run_seconds * 4):
        grade = grade_one(entry, rubric)
    shares = {}
    for item in grade.items:
        counts = re.search(r"(\d+) of (\d+) cases pass \((\d+) of the (\d+) held-out ones\)", item.output)
        assert counts is not None, item.output[:200]
        passed, run, held_passed, held_run = map(int, counts.groups())
        public, held = (passed - held_passed) / (run - held_run), held_passed / held_run
        assert held > public / 2, (item.item.id, public, held)  # the cut left about as many held-out cases
        shares[item.item.id] = public
    # ... and about as many of each item's public cases (in the corpus's order, family by family, 0.19 to 0.43)
    assert max(shares.values()) < 1.5 * min(shares.values()), shares
    assert 0 < grade.score < 100, grade.score
    # every case it fails, it fails for the budget: none is a counterexample, which would replay a case that passes
    assert not grade.counterexample and grade.replay is None, grade.counterexample[:500]
    for item in grade.items:
        assert "### The smallest failing case" not in item.output, item.output[:2000]
        assert "not reached: " in item.output or "cut short: " in item.output, item.output[:2000]
