"""Policies in the spec: the card's rules by default, vLLM v1's differences under vllm-v1 and its setting
reserve_full_isl, each named in every error."""

import pytest

from spec.errors import InvalidConfig, InvalidWorkload
from spec.model import POLICIES, Config, Policy, all_policies
from spec.rules import add, initial_state, schedule_explained, update
from spec.trace import (
    Request,
    config_to_json,
    make_workload,
    run_workload,
    with_policy,
    workload_from_json,
    workload_to_json,
)

V1, CHUNK = Policy.parse("vllm-v1"), Policy.parse("vllm-v1:reserve_full_isl=false")  # vLLM's default, and the other


def thrash(policy: str) -> Config:
    """Two requests and a cache that fits one at its peak: the second preempts itself at step 3 (docs/rules.md)."""
    return Config(num_blocks=4, block_size=2, max_num_seqs=2, max_num_batched_tokens=4, policy=Policy.parse(policy))


def step3(policy: str):
    s = initial_state(thrash(policy))
    s = add(add(s, "a1", 1, 3), "a2", 3, 3)
    for _ in range(2):
        s, _, _ = schedule_explained(s)
        s, _ = update(s, lambda seq_id, out: 7)
    return schedule_explained(s)


def test_the_card_readmits_the_victim_in_the_same_step_and_vllm_v1_does_not():
    _, card, card_events = step3("p07")
    _, v1, v1_events = step3("vllm-v1")
    _, chunk, chunk_events = step3("vllm-v1:reserve_full_isl=false")
    assert dict(card) == {"a1": 1, "a2": 3}  # preempted itself in phase 1, admitted again in phase 2
    assert dict(v1) == dict(chunk) == {"a1": 1}
    assert "P2.policy" in [e.rule for e in v1_events] and "P2.policy" not in [e.rule for e in card_events]
    assert "P2.policy" in [e.rule for e in chunk_events]


def test_without_a_preemption_the_policies_schedule_alike():
    w = make_workload(Config(64, 4, 4, 16), [Request("a1", 9, 5), Request("a2", 30, 4), Request("a3", 2, 6, 3)])
    a, b, c = run_workload(w), run_workload(with_policy(w, V1)), run_workload(with_policy(w, CHUNK))
    assert a.final.num_preemptions == 0
    assert [s.batch for s in a.steps] == [s.batch for s in b.steps] == [s.batch for s in c.steps]


@pytest.mark.parametrize("bad", ["vllm", "", "vllm-v2:reserve_full_isl=false"])
def test_an_unknown_policy_is_refused_by_name(bad):
    with pytest.raises(InvalidConfig, match=f"policy must be one of p07, vllm-v1 .*got {bad!r}"):
        Policy.parse(bad)


@pytest.mark.parametrize("bad, said", [
    (None, "policy must be a string such as 'p07', got None"), (["p07"], r"got \['p07'\]"),
    ("p07:reserve_full_isl=false", "policy p07 has no setting 'reserve_full_isl'; it has none"),
    ("vllm-v1:full=false", "policy vllm-v1 has no setting 'full'; it has reserve_full_isl"),
    ("vllm-v1:reserve_full_isl=0", "write each setting as name=true or name=false, got 'reserve_full_isl=0'"),
    ("vllm-v1:reserve_full_isl=false,reserve_full_isl=true", "sets reserve_full_isl twice")])
def test_a_bad_policy_is_refused_naming_what_is_wrong(bad, said):
    with pytest.raises(InvalidConfig, match=said):
        Policy.parse(bad)


def test_a_config_takes_only_a_policy_value_and_a_policy_only_settings_off_their_defaults():
    with pytest.raises(InvalidConfig, match="policy must be a Policy, got 'vllm-v1'; read a written one with Policy"):
        Config(4, 2, 2, 4, policy="vllm-v1")  # type: ignore[arg-type]
    with pytest.raises(InvalidConfig, match="off their defaults"):
        Policy("vllm-v1", (("reserve_full_isl", True),))  # the default: written "vllm-v1", one value for one policy
    assert Policy.parse("vllm-v1:reserve_full_isl=true") == V1 and str(V1) == "vllm-v1"


@pytest.mark.parametrize("policy", all_policies(), ids=str)
def test_every_policy_reads_back_from_how_it_is_written(policy):
    assert Policy.parse(str(policy)) == policy
    w = make_workload(Config(4, 2, 2, 4, policy=policy), [Request("a1", 1, 3)])
    assert workload_from_json(workload_to_json(w)).config.policy == policy


def test_a_trace_records_a_policy_other_than_the_cards_and_reads_it_back():
    w = make_workload(thrash("vllm-v1:reserve_full_isl=false"), [Request("a1", 1, 3)])
    assert config_to_json(w.config)["policy"] == "vllm-v1:reserve_full_isl=false"
    assert "policy" not in config_to_json(thrash("p07"))  # the card's traces stay as they were
    assert workload_from_json(workload_to_json(w)).config.policy == CHUNK
    bad = workload_to_json(w)
    bad["config"]["policy"] = ["x"]
    with pytest.raises(InvalidWorkload, match=r"workload.config.policy: policy must be a string such as 'p07', got "
                                              r"\['x'\]"):
        workload_from_json(bad)


def test_every_policy_is_described():
    assert set(POLICIES) == {"p07", "vllm-v1"} and all(POLICIES.values())


def test_vllm_v1_admits_a_head_only_when_its_whole_sequence_would_fit():
    # 4 blocks of 3; at step 3 one block is free: the card admits a2 with a 2-token chunk, vllm-v1 waits
    w = make_workload(Config(4, 3, 2, 3), [Request("a1", 7, 1), Request("a2", 4, 1)])
    card, v1, chunk = run_workload(w), run_workload(with_policy(w, V1)), run_workload(with_policy(w, CHUNK))
    assert card.steps[2].batch == chunk.steps[2].batch == (("a1", 1), ("a2", 2))  # the gate is reserve_full_isl's
    assert [s.batch for s in chunk.steps] == [s.batch for s in card.steps]  # no preemption here: the card's run
    assert v1.steps[2].batch == (("a1", 1),) and "P2.whole" in [e.rule for e in v1.steps[2].events]
    assert v1.steps[3].batch == (("a2", 3),)  # admitted once it fits whole, with only its chunk's blocks
    assert v1.steps[3].after_schedule.blocks_used == 1
