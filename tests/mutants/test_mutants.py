"""Quality tests: every catalog bug, planted in the reference, is caught by the quick profile.

Each mutant's findings (check -> rule id and counterexample size) are pinned in
expected/<name>.json by ``python -m tests.mutants.pin``; a change in what the suite
finds shows up here as a diff. Every run leaves the corpus's `counterexamples` family
out (pin.HONEST): the suite must find each bug without replaying its pinned counterexample.
"""

import json
from pathlib import Path

import pytest

import spec.faults
from conformance.catalog import CATALOG
from conformance.mutants import build, shapes
from conformance.suite import run
from tests.mutants.pin import HONEST

HERE = Path(__file__).parent
NAMES = [bug.name for bug in CATALOG]


def findings(report):
    return {cx.check: {"rule": cx.finding.rule, "call": cx.finding.call, **cx.size} for cx in report.counterexamples}


def expected(name):
    return json.loads((HERE / "expected" / f"{name}.json").read_text())


def test_every_catalog_bug_is_stated_once_and_has_a_pinned_finding():
    rule_bugs, shape_bugs = set(spec.faults.BY_NAME), set(shapes.BY_NAME) - set(shapes.EQUIVALENT)
    assert not rule_bugs & set(shapes.BY_NAME), "a bug is stated both as a rule edit and as a code shape"
    assert sorted(rule_bugs | shape_bugs) == sorted(NAMES)
    assert shape_bugs == set(spec.faults.NOT_EXPRESSIBLE), "a code shape must say why the proofs cannot run it"
    assert sorted(p.stem for p in (HERE / "expected").glob("*.json")) == sorted(NAMES)


def test_the_generated_mutant_files_are_fresh():
    """The stubs and examples/p07_buggy/ as build.py makes them (python -m conformance.mutants)."""
    stale = [str(path) for path, text in build.files().items() if not path.is_file() or path.read_text() != text]
    assert not stale, stale


@pytest.mark.parametrize("name", build.names())
def test_every_mutant_differs_from_the_reference_by_its_edits_only(name):
    reference, mutant = build.source(None).splitlines(), build.source(name).splitlines()
    changed = [line for line in mutant[3:] if line not in reference]  # past the docstring's first line
    assert changed, f"{name} plants nothing"
    assert len(changed) <= 12, changed


def test_an_anchor_that_no_longer_matches_fails_loudly():
    broken = shapes.Shape("broken", "nowhere", (spec.faults.Edit("no such text\n", "x\n"),))
    with pytest.raises(spec.faults.FaultError, match="occurs 0 times"):
        build.source(None, extra=broken)


@pytest.mark.long
def test_the_submission_the_mutants_derive_from_is_conformant(tmp_path):
    path = tmp_path / "rules.py"
    path.write_text(build.source(None))
    report = run(str(path), "quick")
    assert report.verdict == "PASS", report.summary()


@pytest.mark.long
def test_the_generated_reference_file_is_conformant():
    report = run("conformance/mutants/reference_scheduler.py", "quick")
    assert report.verdict == "PASS", report.summary()


@pytest.mark.long
@pytest.mark.parametrize("name", NAMES)
def test_quick_profile_catches_mutant_with_the_pinned_findings(name):
    # nothing here reads the diagnosis (test_diagnosis.py and test_causes.py do): skipping it costs no assertion
    report = run(f"conformance/mutants/{name}.py", "quick", families=HONEST, diagnose=False)
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


def test_a_planted_mutant_overrides_only_the_rule_its_bug_changes():
    from conformance.mutants.plant import plant, reference

    namespace = {"__name__": "planted"}
    plant(namespace, "eos_before_append")
    planted = namespace["Scheduler"]
    assert [k for k in vars(planted) if not k.startswith("__")] == ["_update"]
    assert planted.__mro__[1] is reference()["Scheduler"] and namespace["Sequence"] is reference()["Sequence"]
