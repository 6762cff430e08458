"""OUT by relational induction (spec/bounded/relational.py): proved on the spec, refuted with output cleared.

The fault the induction must fail on is carried by the encoding (``Run(fault=...)``), so the encoding with it is
validated against spec/rules.py patched by spec/faults.py, as the clean encoding is against spec/rules.py.
"""

import itertools

import pytest

import spec.rules
from spec import faults
from spec.bounded import relational, validate
from spec.bounded.encode import Bounds
from spec.bounded.transition import ENCODED_FAULTS, Run
from tests.proofs.encodings import compared_with

FAULT = "preempt_clears_output"
SMALL = Bounds(slots=3, steps=6)


def first_mismatch(rules, fault, count=40):
    with compared_with(rules, SMALL, fault) as v:  # validate.Validator(SMALL, rules, fault), each encoding built once
        return next((m for w in itertools.islice(validate.stream(validate.SEED, count, SMALL), count)
                     if (m := v.compare(w))), None)


def test_the_encoded_fault_agrees_with_the_fault_planted_in_the_spec():
    assert FAULT in ENCODED_FAULTS
    assert first_mismatch(faults.load(FAULT), FAULT) is None


def test_the_encoded_fault_is_not_the_spec_and_the_clean_encoding_is_not_the_fault():
    assert first_mismatch(spec.rules, FAULT) is not None
    assert first_mismatch(faults.load(FAULT), None) is not None


def test_a_fault_without_an_encoding_is_refused_with_what_to_do():
    with pytest.raises(ValueError, match="prove --inject"):
        Run(SMALL, validate.Inputs.fresh(SMALL), fault="preempt_to_tail")


def test_the_pair_invariant_holds_initially():
    assert relational.initial_holds(2)


def test_relational_induction_proves_out_and_fails_with_output_cleared():
    """Two slots, block size 1 (the full run: four slots, block sizes 1..4, in results.json)."""
    assert relational.prove_out(2, block_sizes=(1,)).verdict == "proved"
    bad = relational.prove_out(2, block_sizes=(1,), fault=FAULT)
    assert (bad.verdict, bad.broken) == ("counterexample", "OUT")
