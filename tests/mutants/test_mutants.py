"""Quality tests: every catalog bug, planted in the reference, is caught by the quick profile.

Each mutant's findings (check -> rule id and counterexample size) are pinned in
expected/<name>.json by ``python -m tests.mutants.pin``; a change in what the suite
finds shows up here as a diff. Every run leaves the corpus's `counterexamples` family
out (pin.HONEST): the suite must find each bug without replaying its pinned counterexample.
"""

import json
from pathlib import Path

import pytest

from conformance.catalog import CATALOG
from conformance.suite import run
from tests.mutants.pin import HONEST

HERE = Path(__file__).parent
MUTANTS = Path(__file__).resolve().parents[2] / "conformance" / "mutants"
NAMES = [bug.name for bug in CATALOG]


def findings(report):
    return {cx.check: {"rule": cx.finding.rule, "call": cx.finding.call, **cx.size} for cx in report.counterexamples}


def expected(name):
    return json.loads((HERE / "expected" / f"{name}.json").read_text())


def test_every_catalog_bug_has_a_mutant_and_a_pinned_finding():
    assert sorted(p.stem for p in MUTANTS.glob("*.py") if p.stem != "reference_scheduler"
                  and not p.stem.startswith("equivalent_")) == sorted(NAMES)
    assert sorted(p.stem for p in (HERE / "expected").glob("*.json")) == sorted(NAMES)


def test_the_reference_the_mutants_derive_from_is_conformant():
    report = run("conformance/mutants/reference_scheduler.py", "quick")
    assert report.verdict == "PASS", report.summary()


@pytest.mark.parametrize("name", NAMES)
def test_quick_profile_catches_mutant_with_the_pinned_findings(name):
    report = run(f"conformance/mutants/{name}.py", "quick", families=HONEST)
    assert all(not cx.source.startswith("corpus/counterexamples/") for cx in report.counterexamples)
    got = findings(report)
    assert report.verdict == "FAIL"
    assert got == expected(name)["white_box"]
    for size in got.values():
        assert size["requests"] <= 4, (name, size)
        # livelocks need a few rounds; a hang on a prompt near 2**53 cannot shrink below the step cap
        assert size["steps"] <= 30 or size["rule"] == "H.timeout", (name, size)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_black_box_checks_alone_catch_mutant(name):
    report = run(f"conformance/mutants/{name}.py", "quick", white_box=False, families=HONEST)
    assert report.verdict == "FAIL"
    assert findings(report) == expected(name)["black_box"]


def test_the_kill_matrix_in_the_docs_is_the_one_the_pins_make():
    from tests.mutants.matrix import table

    docs = (Path(__file__).resolve().parents[2] / "docs" / "conformance.md").read_text()
    assert table() in docs, "docs/conformance.md's kill matrix is stale: paste `python -m tests.mutants.matrix`"
