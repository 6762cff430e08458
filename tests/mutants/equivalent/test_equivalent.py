"""Mutants that cannot be told from the reference by any workload: the suite must find nothing.

The arguments are in docs/conformance.md ("Equivalent mutants"); these runs are the evidence
at the quick profile (a detection here would disprove the argument, not the suite).
"""

from pathlib import Path

import pytest

from conformance.suite import run

MUTANTS = Path(__file__).resolve().parents[3] / "conformance" / "mutants"


@pytest.mark.long
@pytest.mark.parametrize("name", ["max_num_seqs_in_phase1", "sample_unscheduled_caught_up"])
def test_equivalent_mutant_has_no_findings(name):
    report = run(str(MUTANTS / f"equivalent_{name}.py"), "quick")
    assert report.verdict == "PASS", report.summary()
