"""Each invariant check can fail: plant one violation in a real step of the card's cases and see it reported."""

from dataclasses import replace

import pytest

from spec import Status, check_state, check_step, outputs_equivalent
from spec.golden import case_named
from spec.invariants import (
    i1_blocks_accounted,
    i2_batch_within_budget,
    i3_computed_within_tokens,
    i3_sampled_only_when_caught_up,
    i4_preemption_keeps_output,
    i5_preempted_to_head,
    i6_one_queue_each,
)
from spec.trace import run_workload


def steps(name):
    return run_workload(case_named(name).workload).steps


def preemption_step():
    """Example 2, step 2: a1 grows and preempts a2. Returns (before, batch, after) of that schedule()."""
    s1, s2 = steps("example2")[:2]
    return s1.after_update, s2.batch, s2.after_schedule


def update_step(name="example1", index=0):
    s = steps(name)[index]
    return s.after_schedule, s.batch, s.after_update


def with_seq(state, queue, seq_id, **changes):
    seqs = tuple(replace(q, **changes) if q.seq_id == seq_id else q for q in getattr(state, queue))
    return replace(state, **{queue: seqs})


def only(violations, invariant):
    assert violations, f"{invariant} was not reported"
    assert {v.invariant for v in violations} == {invariant}
    return violations


def test_real_steps_have_no_violations():
    for name in ("budget16", "example1", "example2", "example3", "self_preemption"):
        prev = None
        for s in steps(name):
            if prev is not None:
                assert check_step(prev, s.batch, s.after_schedule) == []
            assert check_step(s.after_schedule, s.batch, s.after_update) == []
            prev = s.after_update


def test_i1_reports_blocks_used_out_of_sync():
    _, _, after = update_step()
    v = only(list(i1_blocks_accounted(replace(after, blocks_used=after.blocks_used + 1))), "I1")
    assert (v[0].expected, v[0].actual) == (after.blocks_used, after.blocks_used + 1)


def test_i1_reports_over_allocation_and_wrong_holdings():
    _, _, after = update_step()
    bad = with_seq(after, "running", "a2", num_blocks=2)
    v = only(list(i1_blocks_accounted(bad)), "I1")
    assert any(x.seq_id == "a2" and x.expected == 1 and x.actual == 2 for x in v)
    full = replace(after, blocks_used=101, running=tuple(replace(q, num_blocks=q.num_blocks + 49)
                                                         for q in after.running))
    assert any("exceeds num_blocks" in x.message for x in i1_blocks_accounted(full))


def test_i1_reports_a_waiting_sequence_holding_blocks():
    _, _, after = preemption_step()
    v = only(list(i1_blocks_accounted(with_seq(after, "waiting", "a2", num_blocks=2))), "I1")
    assert v[0].seq_id == "a2"


def test_i3_reports_num_computed_beyond_num_tokens():
    _, _, after = update_step()
    v = only(list(i3_computed_within_tokens(with_seq(after, "running", "a1", num_computed=99))), "I3")
    assert v[0].seq_id == "a1" and v[0].actual == 99


def test_i3_reports_sampling_during_a_partial_prefill():
    before, batch, after = update_step()  # example 1 step 1: a2 computes 2 of 5, samples nothing
    bad = with_seq(after, "running", "a2", output=(200,))
    v = only(list(i3_sampled_only_when_caught_up(before, batch, bad)), "I3")
    assert v[0].seq_id == "a2" and (v[0].expected, v[0].actual) == (0, 1)


def test_i3_reports_a_missing_sample_at_equality():
    before, batch, after = update_step()
    bad = with_seq(after, "running", "a1", output=())
    v = list(i3_sampled_only_when_caught_up(before, batch, bad))
    assert [(x.invariant, x.seq_id, x.expected, x.actual) for x in v] == [("I3", "a1", 1, 0)]


def test_i4_reports_output_cleared_on_preemption():
    before, batch, after = preemption_step()
    v = only(list(i4_preemption_keeps_output(before, batch, with_seq(after, "waiting", "a2", output=()))), "I4")
    assert v[0].seq_id == "a2" and v[0].expected == [200]


def test_i4_reports_num_computed_kept_on_preemption():
    before, batch, after = preemption_step()
    v = only(list(i4_preemption_keeps_output(before, batch, with_seq(after, "waiting", "a2", num_computed=3))),
             "I4")
    assert v[0].actual == (3, 0)


def test_i5_reports_a_victim_pushed_to_the_tail():
    s = steps("example3")
    before = replace(s[0].after_update)
    # plant: example 3 after step 1 has waiting [a2, a3]; pretend a1 was preempted to the tail
    a1 = replace(before.running[0], num_computed=0, num_blocks=0, status=Status.WAITING)
    after = replace(before, running=(), waiting=before.waiting + (a1,), blocks_used=0)
    v = only(list(i5_preempted_to_head(before, (), after)), "I5")
    assert v[0].expected == ["a1", "a2", "a3"] and v[0].actual == ["a2", "a3", "a1"]


def test_i5_reports_an_admission_that_jumped_the_queue():
    before = steps("example3")[0].after_schedule
    before = replace(before, pending=None)
    a3 = replace(before.waiting[1], status=Status.RUNNING, num_blocks=1)
    after = replace(before, waiting=before.waiting[:1], running=before.running + (a3,))
    v = only(list(i5_preempted_to_head(before, (("a3", 1),), after)), "I5")
    assert v[0].actual == ["a2"]


def test_i2_reports_over_budget_zero_and_duplicate_rows():
    before, batch, after = preemption_step()
    v = only(list(i2_batch_within_budget(before, (("a1", 65),), after)), "I2")
    assert v[0].expected == "<= 64"
    assert only(list(i2_batch_within_budget(before, (("a1", 0),), after)), "I2")[0].actual == 0
    assert "twice" in only(list(i2_batch_within_budget(before, (("a1", 1), ("a1", 1)), after)), "I2")[0].message


def test_i2_reports_a_finished_sequence_scheduled():
    s = steps("example1")
    before = s[1].after_update  # a3 finished
    assert only(list(i2_batch_within_budget(before, (("a3", 1),), before)), "I2")[0].seq_id == "a3"


@pytest.mark.parametrize("plant", ["two_queues", "wrong_status", "too_many"])
def test_i6_reports_queue_membership_errors(plant):
    _, _, after = update_step()
    if plant == "two_queues":
        bad = replace(after, finished=(replace(after.running[0], status=Status.FINISHED),))
    elif plant == "wrong_status":
        bad = with_seq(after, "running", "a1", status=Status.WAITING)
    else:
        bad = replace(after, config=replace(after.config, max_num_seqs=1))
    v = only(list(i6_one_queue_each(bad)), "I6")
    assert v[0].seq_id in ("a1", None)


def test_check_state_collects_every_state_invariant():
    _, _, after = update_step()
    bad = with_seq(replace(after, blocks_used=0), "running", "a1", num_computed=-1)
    assert {v.invariant for v in check_state(bad)} == {"I1", "I3"}


def test_output_equivalence_reports_the_differing_sequence():
    v = outputs_equivalent({"a1": (100, 101), "a2": (200,)}, {"a1": (100, 101), "a2": ()})
    assert [(x.invariant, x.seq_id, x.expected, x.actual) for x in v] == [("OUT", "a2", [200], [])]
    assert outputs_equivalent({"a1": (1,)}, {"a1": (1,)}) == []
