"""Unit tests of the rules, one behaviour each, mostly from the card's worked cases."""

import pytest

from spec import Config, ProtocolError, Seq, State, Status, add, initial_state, schedule, update
from spec.golden import golden_cases
from spec.rules import blocks_for, preempt, schedule_explained, try_grow
from spec.trace import run_workload


def sample(seq_id, output):
    return {"a1": 100, "a2": 200, "a3": 300}.get(seq_id, 900) + len(output)


def started(config, *requests):
    state = initial_state(config)
    for r in requests:
        state = add(state, *r)
    return state


def test_blocks_for_rounds_up():
    c = Config(10, 4, 1, 1)
    assert [blocks_for(c.block_size, t) for t in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]


def test_try_grow_takes_only_the_missing_blocks():
    state = State(Config(3, 2, 8, 64), blocks_used=2)
    seq = Seq("a1", 2, 3, num_blocks=1)
    grown_state, grown = try_grow(state, seq, 3)
    assert (grown_state.blocks_used, grown.num_blocks) == (3, 2)


def test_try_grow_fails_without_changing_anything():
    state = State(Config(3, 2, 8, 64), blocks_used=3)
    assert try_grow(state, Seq("a1", 2, 3, num_blocks=1), 3) is None


def test_try_grow_with_enough_blocks_held_is_a_no_op():
    state = State(Config(3, 2, 8, 64), blocks_used=3)
    seq = Seq("a1", 2, 3, num_blocks=2)
    assert try_grow(state, seq, 4) == (state, seq)


def test_preempt_resets_kv_keeps_output_and_goes_to_the_head():
    a1 = Seq("a1", 2, 3, output=(100,), num_computed=2, num_blocks=1, status=Status.RUNNING)
    a2 = Seq("a2", 2, 3, output=(200,), num_computed=2, num_blocks=1, status=Status.RUNNING)
    w = Seq("a3", 1, 1)
    state, victim = preempt(State(Config(3, 2, 8, 64), waiting=(w,), running=(a1, a2), blocks_used=2))
    assert victim == a2
    assert state.waiting == (Seq("a2", 2, 3, output=(200,)), w)
    assert state.running == (a1,)
    assert (state.blocks_used, state.num_preemptions) == (1, 1)


def test_phase2_stops_at_head_that_does_not_fit():
    """Card, example 3: a3 fits but may not jump over a2."""
    state = started(Config(5, 4, 8, 100), ("a1", 9, 2), ("a2", 9, 2), ("a3", 1, 2))
    state, batch = schedule(state)
    assert batch == (("a1", 9),)
    assert [q.seq_id for q in state.waiting] == ["a2", "a3"]


def test_max_num_seqs_limits_admission_only():
    state = started(Config(100, 4, 2, 100), ("a1", 3, 5), ("a2", 3, 5), ("a3", 3, 5))
    state, batch = schedule(state)
    assert [i for i, _ in batch] == ["a1", "a2"]
    _, _, events = schedule_explained(update(state, sample)[0])
    assert any(e.rule == "P2.full" and e.seq_id == "a3" for e in events)


def test_budget_is_shared_by_both_phases():
    state = started(Config(100, 4, 8, 5), ("a1", 3, 5), ("a2", 3, 5))
    state, batch = schedule(state)
    assert batch == (("a1", 3), ("a2", 2))


def test_self_preemption_skips_without_advancing():
    """Card, L3 trace step 2: the victim is a2 itself; nothing after it is lost."""
    state = started(Config(3, 2, 8, 64), ("a1", 2, 3), ("a2", 2, 3))
    state, _ = update(schedule(state)[0], sample)
    state, batch, events = schedule_explained(state)
    assert batch == (("a1", 1),)
    assert [e.rule for e in events] == ["P1", "P1.skip_self", "P2.stop"]
    assert state.waiting[0].output == (200,)


def test_preempted_sequence_is_retried_in_phase2_of_the_same_step():
    """a2 is mid-prefill holding 3 blocks; a1 evicts it, and a2 comes back at once with a 1-token chunk."""
    state = started(Config(6, 1, 8, 2), ("a1", 1, 5), ("a2", 4, 1))
    for _ in range(3):
        state, _ = update(schedule(state)[0], sample)
    state, batch, events = schedule_explained(state)
    assert [e.rule for e in events] == ["P1.preempt", "P1", "P2"]
    assert batch == (("a1", 1), ("a2", 1))
    assert state.num_preemptions == 1


def test_partial_prefill_does_not_sample():
    state = started(Config(100, 4, 8, 4), ("a1", 10, 2))
    calls = []
    state, _ = schedule(state)
    state, done = update(state, lambda i, o: calls.append(i) or 1)
    assert calls == [] and done == ()
    assert state.running[0].num_computed == 4


def test_eos_finishes_early_and_frees_blocks():
    state = started(Config(100, 4, 8, 64, eos=0), ("a1", 5, 10))
    state, _ = schedule(state)
    state, done = update(state, lambda i, o: 0)
    assert [q.seq_id for q in done] == ["a1"] and done[0].output == (0,)
    assert state.blocks_used == 0 and done[0].num_blocks == 0 and done[0].status is Status.FINISHED


def test_update_samples_in_batch_order_and_returns_finished_in_that_order():
    state = started(Config(100, 4, 8, 64), ("a1", 2, 1), ("a2", 2, 1))
    calls = []
    state, _ = schedule(state)
    state, done = update(state, lambda i, o: calls.append(i) or 5)
    assert calls == ["a1", "a2"] and [q.seq_id for q in done] == ["a1", "a2"]


def test_schedule_twice_without_update_is_a_protocol_error():
    state, _ = schedule(started(Config(10, 4, 8, 8), ("a1", 2, 2)))
    with pytest.raises(ProtocolError, match="call update"):
        schedule(state)


def test_schedule_twice_is_a_protocol_error_even_after_an_empty_batch():
    """An idle step (nothing waiting or running) schedules the empty batch, which is still pending."""
    state, batch = schedule(initial_state(Config(10, 4, 8, 8)))
    assert batch == ()
    with pytest.raises(ProtocolError, match="call update"):
        schedule(state)
    state, done = update(state, sample)
    assert done == () and schedule(state)[1] == ()


def test_update_without_schedule_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="call schedule"):
        update(initial_state(Config(10, 4, 8, 8)), sample)


@pytest.mark.parametrize("case", golden_cases(), ids=lambda c: c.name)
def test_explanations_account_for_every_decision(case):
    """Each step's events name exactly the batch, the preemptions, the samples and the finishes it made."""
    preemptions_before = 0
    for step in run_workload(case.workload).steps:
        scheduled = tuple((e.seq_id, dict(e.data)["n"]) for e in step.events if e.rule in ("P1", "P2"))
        assert scheduled == step.batch, f"step {step.step}"
        preempted = sum(e.rule in ("P1.preempt", "P1.skip_self") for e in step.events)
        assert preempted == step.after_schedule.num_preemptions - preemptions_before, f"step {step.step}"
        preemptions_before = step.after_update.num_preemptions
        sampled = tuple((e.seq_id, dict(e.data)["token"]) for e in step.events if e.rule == "U.sample")
        assert sampled == step.sampled, f"step {step.step}"
        assert tuple(e.seq_id for e in step.events if e.rule == "U.finish") == step.finished, f"step {step.step}"
