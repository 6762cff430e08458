"""The block strips picture the spec: the card's own strips, and every count of the card's tables."""

import pytest

from conformance.adapters import load_target
from conformance.drivers import run_workload as observe
from conformance.viewer.strips import Blocks, placed, spec_strips, text
from spec.golden import case_named, golden_cases
from spec.trace import run_workload


def strips_of(name):
    trace = run_workload(case_named(name).workload)
    return [(text(s.after_schedule), text(s.after_update)) for s in spec_strips(trace)]


def test_example2_strips_are_the_cards():
    """The card draws example 2 as a1a2a2 (the cache is full), then a1a1· once a2 is preempted and a1 grows."""
    strips = strips_of("example2")
    assert strips[0] == ("a1a2a2", "a1a2a2")
    assert strips[1] == ("a1a1·", "a1a1·")
    assert strips[2][1] == "···" and strips[3] == ("a2a2·", "···")


def test_self_preemption_frees_the_victims_block_in_place():
    assert [s[0] for s in strips_of("self_preemption")] == ["a1a2·", "a1·a1", "a1·a1", "a2a2·", "a2a2·"]


@pytest.mark.parametrize("case", golden_cases(), ids=lambda c: c.name)
def test_every_strip_holds_the_cards_counts(case):
    """Each sequence's cells and the held cells in all equal the card's num_blocks and blocks_used, step by step."""
    strips = spec_strips(run_workload(case.workload))
    for want, got in zip(case.steps, strips, strict=True):
        cells = [who for who in got.after_update if who is not None]
        if "blocks_used" in want:
            assert len(cells) == want["blocks_used"]
        for seq_id, fields in want.get("seqs", {}).items():
            assert cells.count(seq_id) == fields[2], (case.name, seq_id)


@pytest.mark.parametrize("case", golden_cases(), ids=lambda c: c.name)
def test_a_conforming_submission_is_placed_as_the_spec(case):
    observed = observe(case.workload, load_target("impl", None), white_box=True)
    pairs = [(st["after_update"]["running"], {k: v["num_blocks"] for k, v in st["after_update"]["seqs"].items()})
             for st in observed["steps"]]
    assert placed(pairs, case.workload.config.num_blocks) == [s.after_update for s in
                                                               spec_strips(run_workload(case.workload))]


def test_counts_that_overrun_the_cache_have_no_picture_and_placing_goes_on():
    pairs = [(["a1"], {"a1": 2}), (["a1", "a2"], {"a1": 2, "a2": 2}), (["a2"], {"a2": 1})]
    assert placed(pairs, 3) == [("a1", "a1", None), None, ("a2", None, None)]


def test_a_shrinking_count_gives_back_its_last_blocks():
    blocks = Blocks(4)
    blocks.resize("a1", 3)
    blocks.resize("a1", 1)
    blocks.resize("a2", 2)
    assert text(blocks.strip()) == "a1a2a2·"
