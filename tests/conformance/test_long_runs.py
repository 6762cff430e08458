"""Faults that show only after a thousand steps or admissions (tests/conformance/outside/: three of the four bugs
`default` once passed), and the step tables that show them.

- A head that waits more than a patience of ~1000 steps is let by (bug_head_aging): reach.blocked_head keeps a
  head from fitting for 2**10 + 1 (quick) and 2**11 + 1 (default) steps with a request behind it that would fit.
- num_preemptions read through a recursion over the run's history (bug_recursive_history): it reads at first and
  raises past the recursion limit. State that earlier snapshots read and that then cannot be read is an
  invariants finding, in check's drivers and in the sandbox's parent alike; absent from the start, a note.
- An admission tag that wraps at 1024 and a count kept in a log of 1000 entries (bug_admit_tag_wrap,
  bug_log_maxlen): default preempts one sequence 2**11 + 1 times.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.checks.whitebox import invariants
from conformance.checks.workload import check_workload
from conformance.drivers import run_workload
from conformance.grading.observe import observed_trace
from conformance.grading.tables import markdown_table
from conformance.reports.report import Counterexample
from conformance.reports.traces import render, shown_steps
from conformance.sandbox.run import run_in_sandbox
from conformance.workloads import reach
from conformance.workloads.dimensions import BY_NAME, _single

OUTSIDE = Path(__file__).parent / "outside"


def bug(name: str) -> str:
    return str(OUTSIDE / f"{name}.py")


def test_a_head_let_by_after_a_thousand_blocked_steps_fails_and_its_table_reaches_the_divergence() -> None:
    w = reach.blocked_head(2**10 + 1)
    assert not {c for c, f in check_workload(w, load_target("impl")).items() if f is not None}
    found = check_workload(w, load_target(bug("bug_head_aging")))["differential"]
    assert found is not None and found.rule == "P2.stop" and found.step > 1000
    cx = Counterexample("differential", found, w, "reach/blocked-head-1025")
    text = render(cx, run_workload(w, load_target(bug("bug_head_aging"))))
    assert f">> {found.step:>4}  schedule" in text and "left out" in text and len(text.splitlines()) < 80, text[-800:]
    observed = run_workload(w, load_target(bug("bug_head_aging")))
    table = markdown_table(w, observed, found, "reach/blocked-head-1025")
    assert f"| {found.step} ◀ |" in table and "left out" in table and len(table.splitlines()) < 40, table[-800:]


def test_the_blocked_head_measure_reads_the_run() -> None:
    measure = BY_NAME["head-blocked-steps"].measure
    for steps in (5, 2**10 + 1):
        seen = measure(reach.Case("x", (reach.blocked_head(steps),)))
        assert seen.spans and seen.spans[0][1] >= steps, seen
    assert not measure(reach.Case("x", (reach.idle_run(64),))).spans  # idle steps block no head
    assert _single(reach.Case("x", (reach.blocked_head(5),))) is not None


def test_state_that_breaks_after_earlier_reads_is_an_invariants_finding_in_both_commands() -> None:
    w = reach.idle_run(reach.past_recursion(sys.getrecursionlimit()))
    found = check_workload(w, load_target(bug("bug_recursive_history")))["invariants"]
    assert found is not None and found.rule == "I6" and "after earlier steps read it" in found.message, found
    r = run_in_sandbox(bug("bug_recursive_history"), [w]).workloads[0]
    [graded] = invariants(w, observed_trace(w, r))[:1]
    assert "num_preemptions" in graded.message and "after earlier steps read it" in graded.message, graded


def test_state_unreadable_from_the_start_is_still_a_note(tmp_path: Path) -> None:
    path = tmp_path / "raising.py"
    text = (Path(__file__).resolve().parents[2] / "impl" / "scheduler.py").read_text()
    assert text.count("class Scheduler:\n") == 1
    path.write_text(text.replace("class Scheduler:\n", "class Scheduler:\n    @property\n"
                                 "    def num_preemptions(self):\n        raise NotImplementedError\n\n"
                                 "    @num_preemptions.setter\n"
                                 "    def num_preemptions(self, value):\n        pass\n\n"))
    observed = run_workload(reach.blocked_head(5), load_target(str(path)))
    assert observed["white_box_error"] is None and "num_preemptions (NotImplementedError" in (observed["note"] or "")


@pytest.mark.long
@pytest.mark.parametrize("name", ["bug_admit_tag_wrap", "bug_log_maxlen"])
def test_default_preempts_one_sequence_past_a_thousand_times(name: str) -> None:
    w = reach.self_preemption_run(2**11 + 1)
    assert w in {c.workloads[0] for c in reach.cases("default")}
    found = {c: f for c, f in check_workload(w, load_target(bug(name))).items() if f is not None}
    assert found, name


def test_a_short_table_is_shown_whole_and_a_long_one_ends_past_its_divergence() -> None:
    assert shown_steps(30, 30) == list(range(1, 31))
    rows = shown_steps(2049, 1002)
    assert rows[:3] == [1, 2, 3] and rows[3] is None and 1002 in rows and rows[-1] is None and len(rows) < 20
