"""What a grading process keeps from one submission to the next: the class's pure work, made once, and a
heap the cyclic garbage collector does not walk again and again.

Every submission of a class is graded on the same cases, so the spec's run of each case, the spec's
own white-box verdicts along it (conformance.checks.whitebox), the catalog's mutants (diagnosis) and
the exploration's generated workloads are the same for all of them. They are cached per process already
(lru caches); ``warm`` makes them in the parent before the worker processes are forked, so a class pays
for them once, not once per worker. Nothing here depends on a submission, so a grade is the same warm
or cold (tests/grading/test_warm.py).

``settle`` is called before each submission is graded: what is alive then (the caches above, the memos
of reports already read) lives until the process ends, so it is moved out of the collector's sight
(``gc.freeze``); the collector then walks only what the grading of one submission allocates. The
oldest generation is collected a hundred times less often than by default: the objects that reach it
are the memos' entries, which live long (a grade leaves a few dozen objects in unreachable cycles
behind, which wait longer). Neither changes what is computed, only when unreachable cycles are freed.
"""

from __future__ import annotations

import gc

from conformance.grading.rubric import Rubric

THRESHOLDS = (700, 10, 1000)  # gc's defaults are (700, 10, 10)


def settle() -> None:
    """Before grading a submission: collect the young generations, then set everything alive aside."""
    gc.collect(1)
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


def warm(rubric: Rubric) -> None:
    """Make the class's pure work in this process (to be inherited by workers forked after it): the cases,
    the spec's runs and verdicts, the mutants, the exploration's generated workloads."""
    from conformance.checks import whitebox
    from conformance.checks.checkers import expected_trace
    from conformance.grading.diagnose import warm_mutants
    from conformance.grading.judge import grading_cases, run_workloads

    gc.set_threshold(*THRESHOLDS)  # what is made here lives to the end: walking it again and again is wasted
    cases, runs = grading_cases(rubric)
    for w in run_workloads(runs):
        expected_trace(w)
    for c in cases:
        whitebox._spec_calls(c.workload)
    warm_mutants()
    if rubric.explore:
        from conformance.grading.explore import generated_workloads

        generated_workloads(rubric.explore_profile)
