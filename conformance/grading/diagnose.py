"""Diagnosis: which known bug of the catalog reproduces a submission's behaviour exactly.

The catalog's mutants (conformance/mutants/<name>.py, our own code) are run
in-process on the submission's failing workloads; a mutant whose black-box trace
(every schedule(), every sample_fn call, every update() result) equals the
submission's on all of them names the bug: "behaves like: preempt_to_tail".
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from conformance.adapters import Factory, canonical_factory, load_module
from conformance.catalog import CATALOG
from conformance.checks import checkers
from conformance.drivers import run_workload
from spec.trace import Workload, liveness_bound

MUTANTS_DIR = Path(__file__).resolve().parent.parent / "mutants"
MAX_RUNS = 12  # failing runs a mutant must reproduce


@lru_cache(maxsize=64)
def mutant_factory(name: str) -> Factory | None:
    """The canonical factory of a catalog mutant, or None when it is not shipped."""
    path = MUTANTS_DIR / f"{name}.py"
    if not path.is_file():
        return None
    return canonical_factory(load_module(str(path)))


def black_box(w: Workload, observed: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What a black-box grader sees of a run, up to the liveness bound: every call's result, the sample
    calls, how it ended (not the wording of an error) and the final outputs."""
    steps = [(s.get("schedule"), [p[:2] for p in s.get("sampled", [])], s.get("finished"))
             for s in observed["steps"][:liveness_bound(w.requests)] if "finished" in s]  # complete steps
    return steps + [(observed["stop"], observed.get("outputs") if observed["stop"] == "done" else None)]


def fails(workload: Workload, observed: dict[str, Any]) -> bool:
    return any(judge(workload, observed) for judge in (checkers.differential, checkers.liveness, checkers.hygiene))


def diagnose(failing: list[tuple[Workload, dict[str, Any]]]) -> tuple[str, ...]:
    """Names (with the card's symptom) of the catalog bugs that reproduce every black-box failure exactly.

    Only runs that fail black box are compared (a white-box-only failure looks like the
    spec from outside), and a mutant must fail each of them the same way.
    """
    visible = [(w, obs) for w, obs in failing if fails(w, obs)][:MAX_RUNS]
    if not visible:
        return ()
    matches = []
    for bug in CATALOG:
        factory = mutant_factory(bug.name)
        if factory is None:
            continue
        try:
            same = all(black_box(w, m := run_workload(w, factory, white_box=False)) == black_box(w, obs) and fails(w, m)
                       for w, obs in visible)
        except Exception:  # a mutant that cannot run a workload simply does not match
            same = False
        if same:
            matches.append(f"{bug.name}: {bug.symptom}. Hint: {bug.hint}")
    return tuple(matches)
