"""The class's pure work made ahead (conformance.grading.warm) is what a worker would make itself.

warm() fills the per-process caches that every submission of a class reads (the spec's runs of the
cases, the spec's own white-box verdicts along them, the catalog's mutants) before the workers are
forked; a grade must not depend on whether they were filled ahead, so each cached value is compared
with one computed fresh. settle() only changes when the collector looks, never what is alive.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.checks import whitebox
from conformance.checks.checkers import expected_trace
from conformance.checks.diagnosis import mutant_factory
from conformance.grading import batch
from conformance.grading.collect import Entry
from conformance.grading.explore import generated_workloads
from conformance.grading.judge import grading_cases, run_workloads
from conformance.grading.outputs import Grade
from conformance.grading.rubric import Rubric, load_rubric
from conformance.grading.warm import THRESHOLDS, settle, warm
from spec.trace import run_workload


@pytest.fixture
def rubric(monkeypatch: pytest.MonkeyPatch) -> Rubric:
    monkeypatch.setenv("SCHEDCHECK_HELD_OUT_SEED", "12345")
    return replace(load_rubric(), held_out=8)


@pytest.fixture
def collector() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_warm_fills_the_caches_with_what_computing_fresh_gives(rubric: Rubric) -> None:
    warm(rubric)
    cases, runs = grading_cases(rubric)
    misses = (expected_trace.cache_info().misses, whitebox._spec_calls.cache_info().misses)
    for w in run_workloads(runs):
        expected_trace(w)
    for c in cases:
        whitebox._spec_calls(c.workload)
    assert (expected_trace.cache_info().misses, whitebox._spec_calls.cache_info().misses) == misses
    for c in cases[::40]:  # golden, corpus, sentinel and reach cases: the cached values are the fresh ones
        assert expected_trace(c.workload) == run_workload(c.workload)
        assert whitebox._spec_calls(c.workload) == whitebox._spec_calls.__wrapped__(c.workload)
    assert mutant_factory.cache_info().currsize > 0
    n = rubric.explore_profile
    if rubric.explore:  # the exploration's workloads, drawn once: what drawing them afresh gives
        hits = generated_workloads.cache_info().hits
        assert generated_workloads(n) == generated_workloads.__wrapped__(n)
        assert generated_workloads.cache_info().hits == hits + 1


def test_settle_sets_the_live_heap_aside_and_keeps_it(collector: None) -> None:
    kept = [[i] for i in range(1000)]
    settle()
    assert gc.get_freeze_count() > 0 and gc.get_threshold() == THRESHOLDS
    gc.collect()
    assert [k[0] for k in kept] == list(range(1000))


WARMED: list[Rubric] = []


def record(entry: Entry, rubric: Rubric) -> Grade:  # a stand-in grade_one: says what its worker inherited
    raise RuntimeError(f"warmed={bool(WARMED)}")


def warm_here(r: Rubric) -> None:
    WARMED.append(r)


def boom(r: Rubric) -> None:
    raise ValueError("no head start")


@pytest.mark.parametrize(("how", "seen"), [(warm_here, "warmed=True"), (boom, "warmed=False")])
def test_grade_all_warms_before_forking_and_a_failing_warm_is_only_a_lost_head_start(
        tmp_path: Path, rubric: Rubric, how: Callable[[Rubric], None], seen: str) -> None:
    WARMED.clear()
    entries = [Entry(f"s{i}", tmp_path / f"s{i}.py", tmp_path / f"s{i}.py") for i in range(2)]
    assert batch.grade_all(entries, tmp_path / "out", rubric, record, jobs=2, warm=how, progress=None) == 2
    for e in entries:
        assert seen in (tmp_path / "out" / e.name / "grader_error.txt").read_text()
    WARMED.clear()
