"""Run every per-workload check on one workload: the unit that corpora, generators and shrinking share.

``check_workload`` runs the submission (white box when asked), judges the observed
trace with each checker, runs the multi-run probes, and returns the first finding
per check. ``predicate`` gives the same judgement for one check, for the shrinker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from conformance.adapters import Factory, SchedulerUnderTest
from conformance.checks import checkers, history, probes, whitebox
from conformance.checks.checkers import Finding
from conformance.drivers import run_workload
from spec.model import Config, Sample
from spec.trace import Request, Workload, make_workload

WORKLOAD_CHECKS = ("differential", "invariants", "equivalence", "liveness", "hygiene")
Judge = Callable[[Workload, dict[str, Any]], list[Finding]]
JUDGES: tuple[tuple[str, Judge], ...] = (
    ("differential", checkers.differential), ("invariants", whitebox.invariants),
    ("liveness", checkers.liveness), ("hygiene", checkers.hygiene))


def check_workload(workload: Workload, factory: Factory, white_box: bool = True,
                   only: Iterable[str] = WORKLOAD_CHECKS, extra_probes: bool = True) -> dict[str, Finding | None]:
    """The first finding of each requested check (None: it passed) on one workload."""
    wanted = set(only)  # a black-box run's invariants are what its batches show (whitebox.batch_invariants)
    made: list[SchedulerUnderTest] = []

    def keeping(config: Config, sample: Sample) -> SchedulerUnderTest:
        made.append(factory(config, sample))  # kept, so its returned values can be re-checked at the end
        return made[-1]
    observed = run_workload(workload, keeping, white_box=white_box and "invariants" in wanted)
    out: dict[str, Finding | None] = {}
    for name, judge in JUDGES:
        if name in wanted:
            found = judge(workload, observed)
            out[name] = found[0] if found else None
    if "equivalence" in wanted:
        found = probes.equivalence(workload, factory, observed)
        out["equivalence"] = found[0] if found else None
    if "hygiene" in wanted and out.get("hygiene") is None and made and observed["stop"] == "done":
        out["hygiene"] = history.judge_retained(made[0])
    if "hygiene" in wanted and out.get("hygiene") is None and extra_probes:
        found = probes.fresh_dict(workload, factory, observed) or history.instances(workload, factory, plain=observed)
        out["hygiene"] = found[0] if found else None
    return out


def predicate(check: str, factory: Factory, white_box: bool = True) -> Callable[[Workload], Finding | None]:
    """A shrinking predicate: the finding of `check` on a workload, or None."""
    def fails(w: Workload) -> Finding | None:
        return check_workload(w, factory, white_box, only=(check,)).get(check)
    return fails


def probe_white_box(factory: Factory) -> str | None:
    """A note when the target gives no white-box access (the invariants check is then skipped).

    The suite and replay both run this first, so its instance is part of every run's history.
    """
    w = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 1)])
    observed = run_workload(w, factory, white_box=True)
    return observed["note"] if observed["error"] is None else None
