"""Bugs of spec/rules.py at the thresholds of real code, each failing the row `claims at scale`.

Each is wrong only past a size the encoding never reaches (five requests, sizes to 17): a max_num_seqs capped at
256 or 1024, a chunk capped at 2**16 tokens, a budget held in an int32, num_preemptions kept in a byte, blocks
counted through a float. They break no row that compares with the encoding; the claims' statements, judged on
spec/rules.py's runs at both sides of each threshold (spec/bounded/scale.py), see each. Every bug is planted in
the text of the real spec/rules.py.
"""

from __future__ import annotations

import pytest

from spec import faults
from spec.bounded import scale
from spec.faults import Edit
from spec.model import DEFAULT_POLICY, Policy, all_policies

_SEATS = "        if len(state.running) >= state.config.max_num_seqs:"
_SMALL = (8, 15)  # integer widths below 2**16
AT_THE_THRESHOLDS: dict[str, tuple[tuple[Edit, ...], str, scale.Tier]] = {
    # the bug, the claim that must see it, and a tier that stops below its threshold
    "max_num_seqs capped at 256": ((Edit(_SEATS, _SEATS.replace("state.config.max_num_seqs",
                                                                "min(state.config.max_num_seqs, 256)")),),
                                   "AD", scale.Tier((7,), _SMALL, (7,))),
    "running capped at 1024": ((Edit(_SEATS, _SEATS.replace(":", " or len(state.running) >= 1024:")),),
                               "AD", scale.Tier((7, 8, 9), _SMALL, (7,))),
    "a chunk capped at 2**16 tokens": ((Edit("    return min(seq.remaining, budget)",
                                             "    return min(seq.remaining, budget, 2**16)"),),
                                       "CH", scale.Tier((7,), (8, 14), (7,))),
    "the budget held in an int32": ((Edit("    budget = state.config.max_num_batched_tokens\n",
                                          "    budget = min(state.config.max_num_batched_tokens, 2**31 - 1)\n"),),
                                    "CH", scale.Tier((7,), (8, 15, 29), (7,))),
    "num_preemptions kept in a byte": ((Edit("        num_preemptions=state.num_preemptions + 1,",
                                             "        num_preemptions=(state.num_preemptions + 1) % 256,"),),
                                       "NP", scale.Tier((7,), (7,), (7,))),
    "blocks counted through a float": ((Edit("    return -(-tokens // block_size)",
                                             "    return -int(-tokens // float(block_size))"),),
                                       "I1", scale.Tier((7,), (8, 15, 31, 50), (7,))),
    # found by an outside attack on the row's first version: a counter, an output and a queue grow by one per step or
    # event, so their thresholds are reached from a start state (or behind a queue), not by a workload's sizes
    "num_preemptions kept in 16 bits": ((Edit("        num_preemptions=state.num_preemptions + 1,",
                                              "        num_preemptions=(state.num_preemptions + 1) & 0xFFFF,"),),
                                        "NP", scale.Tier((7,), _SMALL, (7,))),
    "the sampler handed the last 2**15 tokens": ((Edit("    token = sample(seq_id, seq.output)\n",
                                                       "    token = sample(seq_id, seq.output[-2**15:])\n"),),
                                                 "SA", scale.Tier((7,), _SMALL, (7,), output_bits=(8, 14))),
    "max_tokens clamped to 2**16": ((Edit("len(seq.output) >= seq.max_tokens:",
                                          "len(seq.output) >= min(seq.max_tokens, 2**16):"),),
                                    "FR", scale.Tier((7,), _SMALL, (7,), output_bits=(8, 15))),
    "waiting cut to 1024 on a preemption": ((Edit("        waiting=(requeued,) + state.waiting,",
                                                  "        waiting=((requeued,) + state.waiting)[:1024],"),),
                                            "I4", scale.Tier((7, 8, 9), _SMALL, (7,))),
    "add() sizes a request through a float": ((Edit("    need = blocks_for(config.block_size, peak)",
                                                    "    need = -int(-peak // float(config.block_size))"),),
                                              "crash", scale.Tier((7,), (8, 15, 31, 50), (7,))),
    "the budget wrapped at 2**64 (a run that would never end)": (
        (Edit("    budget = state.config.max_num_batched_tokens\n",
              "    budget = state.config.max_num_batched_tokens & (2**64 - 1)\n"),), "AD",
        scale.Tier((7,), (8, 15, 31, 32, 53, 63), (7,))),
}


@pytest.mark.parametrize("policy", [pytest.param(p, marks=() if p == DEFAULT_POLICY else pytest.mark.long, id=str(p))
                                    for p in all_policies()])
def test_the_spec_keeps_every_claim_on_both_sides_of_every_threshold(policy):
    """Crowds past 256 and 1024 seats, every integer width to 2**64 + 1, 257 preemptions (under p07)."""
    ws = scale.workloads(scale.QUICK, policy)
    assert {255, 256, 257, 1023, 1024, 1025} <= {p.workload.config.max_num_seqs for p in ws}
    sizes = {p.workload.config.block_size for p in ws} & {p.workload.config.max_num_batched_tokens for p in ws}
    assert {2**k + d for k in (16, 31, 32, 53, 63, 64) for d in (-1, 0, 1)} <= sizes
    row = scale.scale_row(policy=policy)
    assert row["verdict"] == "agree", row["first_difference"]
    assert row["workloads"] == len(ws) and row["largest"]["in_flight"] == 2**10 + 3
    # under vllm-v1 the whole-sequence gate keeps the thrashing sequence out; with it off, a victim waits a step
    # before it is admitted again (P2.policy), so it is preempted every other step
    expected = {DEFAULT_POLICY: 2**8 + 1, Policy("vllm-v1"): 0}.get(policy, 2**7 + 1)
    assert row["largest"]["preemptions"] == expected
    assert row["largest"]["output"] == 2**16 + 2


SLOW = {"running capped at 1024", "num_preemptions kept in a byte", "num_preemptions kept in 16 bits",
        "max_tokens clamped to 2**16", "waiting cut to 1024 on a preemption", "add() sizes a request through a float",
        "the budget wrapped at 2**64 (a run that would never end)"}  # -m long


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.long if n in SLOW else ())
                                  for n in sorted(AT_THE_THRESHOLDS)])
def test_a_bug_at_a_threshold_fails_the_scale_row_and_passes_below_it(name):
    """The row sees each bug because it goes past the bug's threshold: a tier that stops below it passes the
    same bug (so the sizes, not some other workload, are what finds it)."""
    edits, claim, below = AT_THE_THRESHOLDS[name]
    rules = faults.module_with(edits, "scale")
    row = scale.scale_row(rules=rules)
    assert row["verdict"] == "disagree", f"{name} passes the scale row"
    assert str(row["first_difference"]).startswith(f"{claim} "), row["first_difference"]
    assert scale.scale_row(below, rules=rules)["verdict"] == "agree"
