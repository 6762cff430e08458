"""Honest self-measure: the suite finds every catalog bug without replaying the bug's own counterexample.

test_mutants.py pins what quick finds with every corpus family but `counterexamples`
(which holds each mutant's own pinned counterexample, so replaying it would be
circular). Here the frozen small-scope families are left out too, so only the golden
cases, the scale families and the profile's generated sources (edge-biased examples,
the state machine) can find the bug (slow: one quick run per mutant).
tests/mutants/beyond/ holds bugs outside the catalog, planted the same way (edits of the built
submission), that only
the scale families reach: eos compared with `is`, float block counts, a bounded
waiting queue, a retry limit on preemption, a step counter that wraps.
"""

import pytest

from conformance.catalog import CATALOG
from conformance.mutants.build import source
from conformance.suite import run
from conformance.workloads.corpus import family_names
from tests.mutants.beyond import BEYOND

NAMES = [bug.name for bug in CATALOG]
SCALE_ONLY = [f for f in family_names() if f.startswith("scale-")]


def test_the_honest_families_hold_no_pinned_counterexample():
    assert SCALE_ONLY and "counterexamples" not in SCALE_ONLY
    assert len(SCALE_ONLY) == 5, SCALE_ONLY


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_quick_finds_catalog_mutant_from_scale_and_generated_sources_alone(name):
    report = run(f"conformance/mutants/{name}.py", "quick", families=SCALE_ONLY, diagnose=False)
    assert report.verdict == "FAIL", (name, report.summary())
    assert all(cx.source != "corpus/counterexamples" for cx in report.counterexamples)


@pytest.mark.long
@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n == "eos_identity" else pytest.mark.slow)
                                  for n in sorted(BEYOND)])
def test_quick_finds_bug_beyond_the_small_scope(name, tmp_path):
    path = tmp_path / f"{name}.py"
    path.write_text(source(None, extra=BEYOND[name]))
    report = run(str(path), "quick", families=SCALE_ONLY, diagnose=False)
    assert report.verdict == "FAIL", (name, report.summary())
    assert any(cx.source.startswith("corpus/scale-") for cx in report.counterexamples), [
        cx.source for cx in report.counterexamples]


def test_there_are_beyond_scope_bugs_to_find():
    assert len(BEYOND) >= 5, BEYOND
