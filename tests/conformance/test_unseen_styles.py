"""Correct schedulers written from docs/api.md and docs/rules.md alone, in styles the readers were not written for
(tests/conformance/unseen_styles/README.md): each passes, in process and in the sandbox, with no finding; a form
that differs from docs/api.md is at most a note."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.checks.workload import check_workload
from conformance.grading.observe import Case, Observations, judge_case, observed_trace
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from conformance.workloads.corpus import load_corpus
from spec.golden import golden_cases

STYLES = sorted((Path(__file__).parent / "unseen_styles").glob("*.py"))
GOLDEN = {c.workload.name: c for c in golden_cases()}
LIMITS = Limits(workload_seconds=5.0, workload_cpu_seconds=5, startup_seconds=10.0, run_seconds=60.0,
                cpu_seconds=30, memory_bytes=512 << 20, processes=16, output_bytes=1 << 20)


def workloads():
    """The card's cases, then corpus vectors with every kind of preemption, chunk and finish (one of each tag)."""
    chosen, seen = [c.workload for c in golden_cases()], set()
    for v in load_corpus()[0]:
        fresh = set(v.workload.tags) - seen
        if fresh and len(v.workload.requests) <= 16:
            chosen.append(v.workload)
            seen |= fresh
    return chosen


WORKLOADS = workloads()


def test_the_styles_are_all_there():
    assert len(STYLES) == 12 and len(WORKLOADS) > 20


@pytest.mark.parametrize("path", STYLES, ids=lambda p: p.stem)
def test_an_unseen_style_passes_in_process(path):
    factory = load_target(str(path))
    for w in WORKLOADS:
        found = check_workload(w, factory)
        assert all(f is None for f in found.values()), (w.name, {k: f for k, f in found.items() if f})


@pytest.mark.parametrize("path", STYLES, ids=lambda p: p.stem)
def test_an_unseen_style_passes_in_the_sandbox(path):
    result = run_in_sandbox(path, WORKLOADS, LIMITS)
    assert [w.status for w in result.workloads] == ["ok"] * len(WORKLOADS), result.causes()
    for i, w in enumerate(WORKLOADS):
        verdicts = judge_case(Case(f"w{i}", w, (), GOLDEN.get(w.name)), observed_trace(w, result.workloads[i]),
                              None, None)
        assert all(v is None for v in verdicts.values()), (w.name, verdicts)
    observed = Observations(WORKLOADS, result.workloads)
    notes = set(observed.notes())
    assert all("docs/api.md says" in n for n in notes), notes
