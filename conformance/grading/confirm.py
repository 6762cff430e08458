"""`grade`'s confirmation of failures on a freshly loaded copy (conformance/checks/history.py after_history).

The sandbox child runs a class's cases one after another in one process, so a submission whose state
outlives its Scheduler can fail a case only because of the cases before it. As `check` does in process
(conformance/checks/fresh.py), each check's failing cases, smallest first and up to CONFIRM_MAX of them,
are run again in one more sandboxed child, each on a copy of the submission loaded anew ("fresh" in the
run's JSON), and judged again here. A check none of whose confirmed cases fails again is process
history's: each of its findings becomes [H.history] in place, and hygiene's too where hygiene found nothing.
The case still fails every item that names the check, so the score is the same whatever the submission does
in the confirmation run; what changes is which check the report blames (scoring.py leaves [H.history] out of
an item's failed checks), and so the counterexample it hands out. A finding is never dropped: a submission
that fails small cases only when it has run before, and breaks hygiene anyway, loses the points of every case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from conformance.checks.checkers import Finding
from conformance.checks.history import CONFIRM_MAX, after_history
from conformance.grading.observe import Case, Observations
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits, PlannedRun
from spec.trace import Workload

Verdict = dict[str, Finding | None]
UNCONFIRMED = ("H.timeout", "H.history")  # as in process: a hang is not run again


def _parts(case: Case, index: int) -> list[int]:
    return [i for i in (index, case.twin, case.mutated, case.paired, case.alone, case.group, *case.lanes_alone)
            if i is not None]


def _alone(case: Case, index: int, runs: Sequence[Workload | PlannedRun], out: list[PlannedRun]) -> Case:
    """The case with its runs appended to `out`, the first one fresh, its indices moved to theirs there."""
    moved: dict[int, int] = {}
    for i in _parts(case, index):
        if i not in moved:
            run = runs[i]
            out.append(replace(run if isinstance(run, PlannedRun) else PlannedRun(run), fresh=not moved))
            moved[i] = len(out) - 1

    def at(i: int | None) -> int | None:
        return None if i is None else moved[i]
    return replace(case, twin=at(case.twin), mutated=at(case.mutated), paired=at(case.paired),
                   alone=at(case.alone), group=at(case.group), lanes_alone=tuple(moved[i] for i in case.lanes_alone))


def confirmed(path: Path, limits: Limits, cases: Sequence[Case], runs: Sequence[Workload | PlannedRun],
              verdicts: list[Verdict]) -> list[Verdict]:
    """`verdicts` with every check whose failures a fresh copy does not reproduce put down to history."""
    tried: dict[int, list[str]] = {}  # case index -> the checks it is run again for
    for check in sorted({c for v in verdicts for c, f in v.items() if f is not None and f.rule not in UNCONFIRMED}):
        failing = sorted((i for i, v in enumerate(verdicts) if (f := v.get(check)) is not None
                          and f.rule not in UNCONFIRMED),
                         key=lambda i: (len(cases[i].workload.requests), cases[i].vector_id))
        for i in failing[:CONFIRM_MAX]:
            tried.setdefault(i, []).append(check)
    if not tried:
        return verdicts
    again: list[PlannedRun] = []
    moved: dict[int, tuple[Case, int]] = {}  # case index -> the case as run again, and its own run's index there
    for i in sorted(tried):
        start = len(again)
        moved[i] = (_alone(cases[i], i, runs, again), start)
    result = run_in_sandbox(path, again, replace(limits, max_timeouts=1))
    if result.load_error is not None:
        return verdicts  # nothing confirmed: the failures stand as found
    observed = Observations(tuple(r.workload for r in again), result.workloads, limits.workload_cpu_seconds)
    reproduced = set()
    for i, (case, start) in moved.items():
        verdict = observed.judge(case, start)
        if any(result.workloads[j].hung for j in _parts(case, start)):  # out of time, or never run (the budget
            reproduced |= set(tried[i])  # spent): inconclusive, so the failures stand, as in check (fresh.py)
        else:
            reproduced |= {c for c in tried[i] if verdict.get(c) is not None}
    history = {c for cs in tried.values() for c in cs} - reproduced
    if not history:
        return verdicts
    out = []
    for v in verdicts:
        v = dict(v)
        for check in sorted(history):
            f = v.get(check)
            if f is not None and f.rule not in UNCONFIRMED:
                v[check] = after_history(f)  # still this check's failure, which scoring counts, blamed on history
                if v.get("hygiene") is None:
                    v["hygiene"] = v[check]
        out.append(v)
    return out

