"""Diagnosis for grading: which catalog bugs are consistent with every failing run of a submission.

The same machinery as ``schedcheck check`` (conformance/checks/diagnosis.py): a bug is
consistent when its mutant reproduces each finding exactly (same check, rule, first
divergent step, call and observed value). The submission ran in a sandbox, so
workloads cannot be searched for one that tells candidates apart; instead the
failing runs themselves are compared whole (every black-box call), and only the
candidates that match them all are kept. None consistent, or none whose whole runs match: nothing is
diagnosed.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

from conformance.adapters import Factory
from conformance.catalog import CATALOG, bug_named
from conformance.checks import checkers
from conformance.checks.checkers import Finding
from conformance.checks.diagnosis import Evidence, black_box, mutant_factory
from conformance.checks.diagnosis import diagnose as diagnose_findings
from conformance.drivers import run_workload
from spec.trace import Workload

MAX_RUNS = 12  # failing runs a mutant must reproduce
JUDGES = (checkers.differential, checkers.liveness, checkers.hygiene)  # what a sandboxed run can show


def first_finding(workload: Workload, observed: dict[str, Any]) -> Finding | None:
    """The first black-box finding of an observed run (a white-box-only failure looks like the spec).

    The call's name is left out: the sandbox names the call that raised in its own words.
    """
    f = next((found[0] for judge in JUDGES if (found := judge(workload, observed))), None)
    return None if f is None else replace(f, call="")


@lru_cache(maxsize=512)  # a few submissions' worth: 22 suspects on up to 6 failing cases each
def mutant_run(factory: Factory, workload: Workload) -> tuple[Finding | None, tuple[Any, ...]]:
    """A mutant's run of a workload (black box): its first finding, and all a black-box observer sees of it.

    Both depend only on the mutant (the catalog's code) and the workload, so they are kept: the failing
    cases of a class are often the same, and a diagnosis runs a suspect on a case twice (to reproduce
    its finding, then to compare the whole run)."""
    observed = run_workload(workload, factory, white_box=False)
    return first_finding(workload, observed), black_box(workload, observed)


def _rerun(factory: Factory, ev: Evidence) -> Finding | None:
    return mutant_run(factory, ev.workload)[0]


def diagnose(failing: list[tuple[Workload, dict[str, Any]]]) -> tuple[str, ...]:
    """Names (with the card's symptom and hint) of the catalog bugs consistent with every black-box failure."""
    evidence = [Evidence(f.check, w, f) for w, obs in failing[:MAX_RUNS]
                if (f := first_finding(w, obs)) is not None]
    if not evidence:
        return ()
    result = diagnose_findings(evidence, None, _rerun)
    observed = {id(w): obs for w, obs in failing}
    kept = [name for name in result.consistent
            if all(_same_run(name, ev.workload, observed[id(ev.workload)]) for ev in evidence)]
    # a bug that goes wrong where the submission does and then does something else is not named: its hint would
    # contradict what the submission shows (conformance.checks.diagnosis.behaves_alike)
    return tuple(f"{name}: {bug_named(name).symptom}. Hint: {bug_named(name).hint}" for name in kept)


def _same_run(name: str, w: Workload, observed: dict[str, Any]) -> bool:
    factory = mutant_factory(name)
    return factory is not None and mutant_run(factory, w)[1] == black_box(w, observed)


def warm_mutants() -> None:
    """Build every shipped mutant of the catalog now (conformance.grading.warm): the same for every submission."""
    for bug in CATALOG:
        mutant_factory(bug.name)
