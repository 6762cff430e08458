"""Bugs of spec/rules.py that live past the claims' bounds, each failing the row `encoding == spec.rules (wide)`.

The first four passed `prove --quick` with exit 0 when an outside audit planted them: every other row stays at
block_size <= 4, three or four requests and prompts of 8 tokens, and each bug needs more (a block size of 8, a
fifth request, a prompt of 9 tokens, max_num_seqs 4); the fifth, an output of 6 tokens, passed the first
version of the wide row. The wide row (spec/bounded/wide.py) unrolls the encoding for five requests
over 24 steps, sizes to 17, and compares it with the spec; each bug is planted in the text of the real
spec/rules.py. The row costs a 15 s build of the encoding, so these run with `-m long` (CI); CI's
`prove --quick` runs the row on the spec itself.
"""

from __future__ import annotations

import pytest

import spec.rules
from spec import faults
from spec.bounded import wide
from spec.faults import Edit
from tests.proofs.encodings import compared_with

PAST_THE_BOUNDS: dict[str, tuple[Edit, ...]] = {
    "an exact fit refused from block_size 8": (Edit(
        "    if state.blocks_used + need > state.config.num_blocks:",
        "    if state.blocks_used + need > state.config.num_blocks - (state.config.block_size >= 8 and\n"
        "                                                            state.blocks_used + need ==\n"
        "                                                            state.config.num_blocks):"),),
    "max_num_seqs one more from 4": (Edit(
        "        if len(state.running) >= state.config.max_num_seqs:",
        "        if len(state.running) >= state.config.max_num_seqs + (state.config.max_num_seqs >= 4):"),),
    "a preemption in a prefill of 9 tokens or more not counted": (Edit(
        "        num_preemptions=state.num_preemptions + 1,",
        "        num_preemptions=state.num_preemptions + (0 if victim.prompt_len >= 9 and\n"
        "                                                 victim.num_computed < victim.prompt_len else 1),"),),
    "a victim with 6 tokens or more loses its last one": (Edit(
        "    requeued = replace(victim, num_computed=0, num_blocks=0, status=Status.WAITING)\n",
        "    requeued = replace(victim, num_computed=0, num_blocks=0, status=Status.WAITING)\n"
        "    if len(victim.output) >= 6:\n"
        "        requeued = replace(requeued, output=victim.output[:-1])\n"),),
    "the head passed over once four are waiting": (
        Edit("    while state.waiting and budget > 0:\n",
             "    passed = False\n    while state.waiting and budget > 0:\n"),
        Edit("        if grown is None:\n",
             "        if grown is None and len(state.waiting) >= 4 and not passed:\n"
             "            passed = True\n"
             "            state = replace(state, waiting=state.waiting[1:2] + state.waiting[:1] + state.waiting[2:])\n"
             "            continue\n"
             "        if grown is None:\n")),
}


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(PAST_THE_BOUNDS))
def test_a_bug_past_the_bounds_fails_the_wide_row(name):
    rules = faults.module_with(PAST_THE_BOUNDS[name], "wide")
    with compared_with(rules, wide.WIDE) as v:
        row = wide.wide_row(rules=rules, validator=v)
    assert row["verdict"] == "disagree", f"{name} passes the wide row"


@pytest.mark.long
def test_the_spec_agrees_with_the_encoding_past_the_bounds():
    with compared_with(spec.rules, wide.WIDE) as v:
        row = wide.wide_row(validator=v)
    assert row["verdict"] == "agree", row["first_difference"]
    assert row["workloads"] == wide.COUNT
