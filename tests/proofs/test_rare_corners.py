"""Bugs that live where the solver's bounds do not reach, each seen by the row of `prove --quick` aimed at it.

The encoding, the validation and the model check stop at block_size 4 and a few tokens, run one policy at a
time, and trust the scope they print. So each kind of blind spot has its own row, and each row is shown here
failing on a bug of its kind, planted in the real code:

- a helper of spec/rules.py wrong only past the bounds (a shift for power-of-two block sizes >= 16, an int32
  clamp, float division): the arithmetic row;
- eos taken for another value (None read as 0, compared by identity, 0 ignored, compared as floats): the eos
  row;
- add() letting a kind of bad value through (a negative length, a bool max_tokens): the model check's guards;
- a branch of another policy (vllm-v1's whole-sequence gate, off by one): `prove --quick` of the card validates
  every policy's branches;
- the proofs' own scope narrower than printed (the encoding's domain without the largest block size, an induction
  sweep without it): the reach row and the induction rows fail as "narrow".
"""

from __future__ import annotations

import functools
from dataclasses import replace

import pytest

from spec import faults
from spec.bounded import cli, encode, induction, modelcheck, reach, validate, values
from spec.faults import Edit
from spec.model import DEFAULT_POLICY, Config, Policy
from spec.rules import initial_state
from tests.proofs.encodings import compared_with

CEIL = "    return -(-tokens // block_size)"
PAST_THE_BOUNDS = {
    "blocks_for_pow2_shift": Edit(CEIL, "    if block_size >= 16 and block_size & (block_size - 1) == 0:\n"
                                        "        return (tokens + block_size) >> (block_size.bit_length() - 1)\n"
                                        + CEIL),
    "blocks_for_float": Edit(CEIL, "    return -int(-tokens // float(block_size))"),
    "chunk_int32": Edit("    return min(seq.remaining, budget)", "    return min(seq.remaining, budget, 2**31 - 1)"),
}
GUARD = "        if type(value) is not int or value < 1:"
GUARDS = {
    "negative_lengths": Edit(GUARD, "        if type(value) is not int or not value:"),
    "bool_max_tokens": Edit(GUARD, "        if not isinstance(value, int) or value < 1 or (name == 'prompt_len' "
                                   "and isinstance(value, bool)):"),
}
FINISH = "    if (eos is not None and token == eos) or len(seq.output) >= seq.max_tokens:"
EOS = {
    "eos_none_is_zero": Edit("    eos = state.config.eos\n", "    eos = state.config.eos or 0\n"),
    "eos_by_identity": Edit(FINISH, FINISH.replace("token == eos", "token is eos")),
    "eos_zero_ignored": Edit(FINISH, FINISH.replace("eos is not None and token == eos", "eos and token == eos")),
    "eos_as_float": Edit(FINISH, FINISH.replace("token == eos", "float(token) == float(eos)")),
}
WHOLE_OFF_BY_ONE = Edit("    need = blocks_for(state.config.block_size, head.num_tokens) - head.num_blocks",
                        "    need = blocks_for(state.config.block_size, head.num_tokens - 1) - head.num_blocks")


def test_the_arithmetic_row_agrees_with_the_spec():
    row = values.arithmetic_row()
    assert row["verdict"] == "agree", row["first_difference"]
    assert 2**16 in values.BLOCK_SIZES and 2**64 + 1 in values.EDGES


@pytest.mark.parametrize("name", sorted(PAST_THE_BOUNDS))
def test_a_helper_wrong_only_past_the_bounds_fails_the_arithmetic_row(name):
    row = values.arithmetic_row(faults.module_with((PAST_THE_BOUNDS[name],), name))
    assert row["verdict"] == "disagree" and row["first_difference"], name


def test_the_eos_row_agrees_with_the_spec():
    assert values.eos_row()["verdict"] == "agree"


@pytest.mark.parametrize("name", sorted(EOS))
def test_an_eos_taken_for_another_value_fails_the_eos_row(name):
    row = values.eos_row(faults.module_with((EOS[name],), name))
    assert row["verdict"] == "disagree" and row["first_difference"], name


@pytest.mark.parametrize("name", sorted(GUARDS))
def test_a_guard_that_lets_a_kind_of_bad_value_through_fails_the_model_check(name):
    state = initial_state(Config(num_blocks=4, block_size=2, max_num_seqs=2, max_num_batched_tokens=4))
    assert modelcheck.request_violation(faults.module_with((), "clean"), state) is None
    found = modelcheck.request_violation(faults.module_with((GUARDS[name],), name), state)
    assert found is not None and "did not raise InvalidRequest" in found, found


def test_the_validation_under_vllm_v1_sees_its_gate_off_by_one():
    v1 = replace(validate.STREAM, policy=Policy("vllm-v1"))
    rules = faults.module_with((WHOLE_OFF_BY_ONE,), "whole_off_by_one")
    with compared_with(rules, v1) as v:
        bad, _ = validate.validate(validate.QUICK_COUNT, bounds=v1, rules=rules, validator=v)
    assert bad


def test_prove_of_the_card_validates_every_policy(monkeypatch, capsys):
    validated: list[str] = []

    def row(count, rules=None, solver=0, policy=DEFAULT_POLICY):
        validated.append(policy)
        return {"claim": f"validation {policy}", "kind": "validation", "workloads": 0, "steps": 0,
                "preempting_steps": 0, "verdict": "agree", "seconds": 0}

    monkeypatch.setattr(cli, "validation_row", row)
    args = cli.argparse.ArgumentParser()
    cli.add_arguments(args)
    assert cli.main(args.parse_args(["--quick", "--only", "validation"])) == 0
    assert sorted(map(str, validated)) == ["p07", "vllm-v1", "vllm-v1:reserve_full_isl=false"]  # every policy
    assert validated[-1] == DEFAULT_POLICY  # the card's last: it gates its BMC


SMALL = replace(cli.QUICK, steps=2)


def test_every_input_takes_both_ends_of_its_range():
    assert reach.Queries(SMALL, 60).ends_missed() == []


def test_a_domain_without_the_largest_block_size_is_narrow(monkeypatch):
    domain = encode.Inputs.domain

    def narrowed(self, b):
        return [*domain(self, b), self.block_size <= b.block_size - 1]

    monkeypatch.setattr(encode.Inputs, "domain", narrowed)
    assert reach.Queries(SMALL, 60).ends_missed() == [f"block_size = {SMALL.block_size}"]


def test_an_induction_sweep_without_the_largest_block_size_is_narrow(monkeypatch):
    monkeypatch.setattr(induction, "prove", functools.partial(induction.prove, block_sizes=(1, 2, 3)))
    rows = list(cli.induction_rows(2, 60.0, only=("I1",)))
    assert [r["verdict"] for r in rows] == ["narrow"]
    assert tuple(range(1, encode.Bounds().block_size + 1)) == induction.BLOCK_SIZES
