"""The proofs per policy: the encoding follows spec/rules.py under vllm-v1 too, and the claims can fail there."""

from dataclasses import replace

import pytest

import spec.rules
from spec import faults
from spec.bounded import modelcheck, validate
from spec.model import Policy, all_policies
from tests.proofs.encodings import compared_with, encoding

V1 = replace(validate.STREAM, policy=Policy("vllm-v1"))
CHUNK = replace(validate.STREAM, policy=Policy.parse("vllm-v1:reserve_full_isl=false"))  # vLLM v1, the gate off
SCOPE = dict(num_blocks=4, block_size=2, budget=4, max_num_seqs=2, requests=2, prompt_len=3, max_tokens=2)


@pytest.mark.long
def test_the_encoding_agrees_with_the_spec_under_vllm_v1_on_steps_that_hold_admission_back():
    bad, stats = validate.validate(60, bounds=V1, validator=encoding(V1))  # the Validator validate() would build
    assert not bad, bad[0]
    assert stats.held_by_policy > 0 and stats.readmissions == 0  # vllm-v1 never readmits in the same step
    assert stats.held_whole > 0  # and it holds a head back whose whole sequence would not fit


@pytest.mark.long
def test_the_validation_sees_a_spec_without_the_whole_sequence_gate():
    # vllm-v1 with only its first difference: the encoding (which has the gate) must disagree with it
    gate_off = faults.module_with((faults.Edit("if not state.config.policy.reserve_full_isl:\n        return True",
                                               "if True:\n        return True"),), "no_whole_sequence_gate")
    with compared_with(gate_off, V1) as v:
        bad, _ = validate.validate(60, bounds=V1, rules=gate_off, validator=v)
    assert bad


@pytest.mark.long
def test_with_reserve_full_isl_off_the_encoding_agrees_and_sees_a_spec_that_keeps_the_gate():
    bad, stats = validate.validate(60, bounds=CHUNK, validator=encoding(CHUNK))
    assert not bad, bad[0]
    assert stats.held_by_policy > 0 and stats.held_whole == 0  # P2.policy holds a head back, P2.whole never does
    # the setting read as if it were the name: vllm-v1's gate whatever reserve_full_isl says
    by_name = faults.module_with((faults.Edit("if not state.config.policy.reserve_full_isl:\n        return True",
                                              'if state.config.policy.name != "vllm-v1":\n        return True'),),
                                 "gate_by_name")
    with compared_with(by_name, CHUNK) as v:
        bad, _ = validate.validate(60, bounds=CHUNK, rules=by_name, validator=v)
    assert bad


@pytest.mark.long
def test_the_validation_sees_an_encoding_of_the_wrong_policy():
    card = encoding(validate.STREAM)  # encodes p07 ... (validate.Validator(validate.STREAM), built once)
    found = [card.compare(w) for w in validate.stream(validate.SEED, 40, V1)]  # ... judged on vllm-v1 runs
    assert any(f is not None for f in found)


@pytest.mark.long
def test_a_vllm_v1_bug_that_starves_the_queue_breaks_the_claims_only_under_vllm_v1():
    # held back after any preemption so far, not only one of this step: once running empties, nobody is admitted
    starve = faults.module_with((faults.Edit("state.num_preemptions > preemptions)", "state.num_preemptions > 0)"),),
                                "starve_after_any_preemption")
    broken_v1 = modelcheck.explore_all(**SCOPE, rules=starve, every=True, policy=Policy("vllm-v1"))[0].broken
    assert broken_v1, "the model check under vllm-v1 cannot see a starving queue"
    assert modelcheck.explore_all(**SCOPE, rules=starve, policy=Policy())[0].violation is None
    assert modelcheck.explore_all(**SCOPE, rules=spec.rules, policy=Policy("vllm-v1"))[0].violation is None


# Bugs of the policies' gates, planted in the real spec/rules.py by an outside attack: each was caught only where the
# encoding (written apart) disagrees with spec/rules.py. PG states the gates themselves, so the model check of
# spec/rules.py alone sees them too: the same bug made in both files no longer passes. (P2.whole sized by the prompt
# alone breaks PG too, but only with three requests: 206 s of model check, left to `prove`.)
GATE_BUGS = {
    "the P2.policy event without the hold": ((faults.Edit('        return False, (Event("P2.policy"',
                                                          '        return True, (Event("P2.policy"'),),
                                             ("vllm-v1:reserve_full_isl=false",)),  # equivalent under vllm-v1:
    # there the head of waiting after a preemption is its victim, whose whole sequence never fits (P2.whole holds it)
    "P2.whole reading the blocks free before phase 2": ((
        faults.Edit("        if not whole_sequence_fits(state, head):",
                    "        if not whole_sequence_fits(start, head):"),
        faults.Edit("    events: list[Event] = []\n    while state.waiting and budget > 0:",
                    "    events: list[Event] = []\n    start = state\n    while state.waiting and budget > 0:")),
        ("vllm-v1",)),
}
GATE_SCOPE = SCOPE


@pytest.mark.long
@pytest.mark.parametrize("policy", all_policies(), ids=str)
def test_the_spec_passes_every_gate_of_its_policy(policy):
    report = modelcheck.explore_all(**GATE_SCOPE, rules=spec.rules, every=True, policy=policy)[0]
    assert report.violation is None and report.broken == (), report.broken


@pytest.mark.long
@pytest.mark.parametrize("name", GATE_BUGS)
def test_a_gate_bug_in_the_spec_alone_breaks_pg_in_the_model_check(name):
    edits, policies = GATE_BUGS[name]
    rules = faults.module_with(edits, "gate_bug")
    for written in policies:
        report = modelcheck.explore_all(**GATE_SCOPE, rules=rules, every=True, policy=Policy.parse(written))[0]
        assert "PG" in {claim for claim, _, _ in report.broken}, (name, written, report.broken)
