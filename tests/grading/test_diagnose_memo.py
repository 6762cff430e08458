"""A kept mutant run (conformance.grading.diagnose.mutant_run) is what running the mutant again gives.

Diagnosis runs each suspect mutant on a submission's failing cases; those runs depend only on the
mutant and the case, so they are kept for the next submission. Kept or fresh, the finding, the
black-box view and the diagnosis itself must be the same.
"""

from __future__ import annotations

from conformance.catalog import CATALOG
from conformance.checks.diagnosis import black_box, mutant_factory
from conformance.drivers import run_workload
from conformance.grading import diagnose as grading
from spec.golden import golden_cases

CASES = [g.workload for g in golden_cases()]
BUGS = [b.name for b in CATALOG[:6]]


def test_a_kept_run_is_a_fresh_one() -> None:
    grading.mutant_run.cache_clear()
    for name in BUGS:
        factory = mutant_factory(name)
        assert factory is not None
        for w in CASES:
            observed = run_workload(w, factory, white_box=False)
            fresh = (grading.first_finding(w, observed), black_box(w, observed))
            assert grading.mutant_run(factory, w) == fresh
            assert grading.mutant_run(factory, w) == fresh  # the second time, kept
    info = grading.mutant_run.cache_info()
    assert info.hits == info.misses == len(BUGS) * len(CASES)


def test_a_diagnosis_is_the_same_with_the_runs_kept_or_not() -> None:
    diagnosed = 0
    for bug in CATALOG:
        factory = mutant_factory(bug.name)
        assert factory is not None
        failing = [(w, run_workload(w, factory, white_box=False)) for w in CASES]
        failing = [(w, o) for w, o in failing if grading.first_finding(w, o) is not None]
        if not failing:
            continue
        grading.mutant_run.cache_clear()
        cold = grading.diagnose(failing)
        assert grading.diagnose(failing) == cold  # every suspect's runs kept from the first time
        assert grading.mutant_run.cache_info().hits >= grading.mutant_run.cache_info().misses
        assert any(d.startswith(f"{bug.name}:") for d in cold), (bug.name, cold)
        diagnosed += 1
    assert diagnosed >= 3  # the card's cases show several catalog bugs
