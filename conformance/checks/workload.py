"""Run every per-workload check on one workload: the unit that corpora, generators and shrinking share.

``judge_workload`` runs the submission (white box when asked), judges the observed
trace with each checker, runs the multi-run probes, and returns the first finding
per check with the runs they were seen in; ``check_workload`` is its findings.
``predicate`` gives the same judgement for one check, for the shrinker. ``replay``
runs a counterexample as recorded (its prelude first): `schedcheck replay` and the
step table of `schedcheck check` both show its run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from conformance.adapters import CanonicalFactory, Factory, SchedulerUnderTest
from conformance.checks import checkers, history, probes, whitebox
from conformance.checks.checkers import Finding
from conformance.drivers import run_workload
from conformance.observed import PARTLY
from spec.model import Config, Sample
from spec.trace import Request, Workload, make_workload

WORKLOAD_CHECKS = ("differential", "invariants", "equivalence", "liveness", "hygiene")
Judge = Callable[[Workload, dict[str, Any]], list[Finding]]
JUDGES: tuple[tuple[str, Judge], ...] = (
    ("differential", checkers.differential), ("invariants", whitebox.invariants),
    ("liveness", checkers.liveness), ("hygiene", checkers.hygiene))


@dataclass(frozen=True)
class Judged:
    """The first finding of each requested check on one workload, and the runs they were seen in."""

    findings: dict[str, Finding | None]
    observed: dict[str, Any]  # the run every checker judged (white box when invariants were asked for)
    mutated: dict[str, Any] | None = None  # the run whose caller cleared each returned dict, when that probe ran

    def shown(self, finding: Finding) -> dict[str, Any]:
        """The run a finding shows in: the cleared-dict run for H.fresh_dict, else the judged run."""
        return self.mutated if finding.rule == "H.fresh_dict" and self.mutated is not None else self.observed


def judge_workload(workload: Workload, factory: Factory, white_box: bool = True,
                   only: Iterable[str] = WORKLOAD_CHECKS, extra_probes: bool = True) -> Judged:
    """Run `workload` on an instance from `factory` and judge it: each requested check's first finding."""
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
    mutated = None
    if "hygiene" in wanted and out.get("hygiene") is None and extra_probes:
        mutated = run_workload(workload, factory, white_box=False, mutate_results=True)
        found = probes.judge_cleared(observed, mutated) or history.instances(workload, factory, plain=observed)
        out["hygiene"] = found[0] if found else None
    return Judged(out, observed, mutated)


def check_workload(workload: Workload, factory: Factory, white_box: bool = True,
                   only: Iterable[str] = WORKLOAD_CHECKS, extra_probes: bool = True) -> dict[str, Finding | None]:
    """The first finding of each requested check (None: it passed) on one workload."""
    return judge_workload(workload, factory, white_box, only, extra_probes).findings


def replay(workload: Workload, prelude: object, factory: Factory, white_box: bool) -> tuple[Judged, int]:
    """Run a counterexample as its trace records it, on `factory` (a freshly loaded copy, to reproduce a finding
    that needs history): the prelude's earlier instances first, then the workload judged by every check, with
    the instance it was interleaved with or the whole group alive at once; a "repeat" prelude runs it until a
    check fails, up to its count. The last judged run and how many were made."""
    before, beside = history.parse_prelude(prelude)
    times, lanes = history.repeats(prelude), history.group_of(prelude)
    history.run_prelude(before, factory)
    tried = 0
    while True:  # more than once only for a history no fixed prelude rebuilds (an id() reused)
        tried += 1
        judged = judge_workload(workload, factory, white_box)
        found = judged.findings
        if beside is not None and found.get("hygiene") is None:
            paired = history.instances(workload, factory, beside)
            found["hygiene"] = paired[0] if paired else None
        if lanes and found.get("hygiene") is None:
            found["hygiene"] = history.group_finding(lanes, factory)[0]
        if any(f is not None for f in found.values()) or tried >= times:
            return judged, tried


def predicate(check: str, factory: Factory, white_box: bool = True) -> Callable[[Workload], Finding | None]:
    """A shrinking predicate: the finding of `check` on a workload, or None."""
    def fails(w: Workload) -> Finding | None:
        return check_workload(w, factory, white_box, only=(check,)).get(check)
    return fails


@dataclass(frozen=True, slots=True)
class WhiteBox:
    """Whether the target's state is judged after every call, and the note saying what it lacks (None: nothing)."""

    on: bool
    note: str | None


def probe_white_box(factory: Factory) -> WhiteBox:
    """Whether the target gives white-box access, with a note when it lacks any of it. A module of docs/api.md's
    interface is read after every call whatever this run shows, as the grader reads it: each snapshot is judged
    on what it gives (a queue that is there only once it holds something is read where it is there). Through
    another adapter, white box is off when this run's snapshot cannot be judged at all.

    The suite and replay both run this first, so its instance is part of every run's history.
    """
    w = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 1)])
    observed = run_workload(w, factory, white_box=True)
    note = observed["note"] if observed["error"] is None else None
    return WhiteBox(note is None or note.startswith(PARTLY) or isinstance(factory, CanonicalFactory), note)
