"""Properties of the model on random feasible workloads (derandomized Hypothesis).

I1..I6 after every call, termination within the derived liveness bound, output
equivalence between a tight and an ample cache, purity and determinism. The
derived facts of docs/proofs.md are checked here too, as executable claims.
"""

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.workloads.generators import ample_num_blocks, feasible_workloads, with_num_blocks
from spec import outputs_equivalent, run_workload, schedule, update
from spec.feasible import liveness_bound
from tests.conftest import examples
from tests.spec.drive import drive

WORKLOADS = feasible_workloads()


def expected_output(w, r):
    """The output a request must end with, whatever the schedule: the sample rule alone decides it."""
    out = ()
    while True:
        token = w.sample(r.seq_id, out)
        out += (token,)
        if token == w.config.eos or len(out) >= r.max_tokens:
            return out


@settings(max_examples=examples(2000))
@given(WORKLOADS)
def test_invariants_hold_after_every_call(w):
    state, steps, violations = drive(w)
    assert violations == []
    assert {q.seq_id for q in state.finished} == {r.seq_id for r in w.requests}
    assert steps <= liveness_bound(w.requests)
    assert state.blocks_used == 0


@settings(max_examples=examples(400))
@given(WORKLOADS)
def test_outputs_are_what_the_sample_rule_alone_gives(w):
    outputs = run_workload(w).outputs()
    assert outputs == {r.seq_id: expected_output(w, r) for r in w.requests}


@settings(max_examples=examples(400))
@given(WORKLOADS)
def test_tight_and_ample_caches_give_identical_outputs(w):
    tight = run_workload(w)
    ample = run_workload(with_num_blocks(w, ample_num_blocks(w)))
    assert ample.final.num_preemptions == 0
    assert outputs_equivalent(ample.outputs(), tight.outputs()) == []


@settings(max_examples=examples(300))
@given(WORKLOADS, st.data())
def test_calls_never_mutate_their_input_and_are_deterministic(w, data):
    seen = []

    def observe(kind, before, batch, after):
        seen.append((kind, before))

    drive(w, observe)
    kind, before = seen[data.draw(st.integers(0, len(seen) - 1))]
    frozen = copy.deepcopy(before)
    if kind == "schedule":
        first, again = schedule(before), schedule(before)
    else:
        first, again = update(before, w.sample), update(before, w.sample)
    assert first == again
    assert before == frozen


@settings(max_examples=examples(500))
@given(WORKLOADS)
def test_derived_facts_hold(w):
    """(a) every running sequence is scheduled or preempted in every step; (b) len(running) <= budget;
    (c) after update, every running sequence but the last has exactly one token left (it is decoding);
    and running[0] is never preempted."""

    def observe(kind, before, batch, after):
        if kind == "schedule":
            scheduled = {i for i, _ in batch}
            preempted = {q.seq_id for q in after.waiting} & {q.seq_id for q in before.running}
            assert {q.seq_id for q in before.running} <= scheduled | preempted  # (a)
            assert len(after.running) <= after.config.max_num_batched_tokens  # (b)
            assert not before.running or before.running[0].seq_id not in preempted
        else:
            assert all(q.remaining == 1 for q in after.running[:-1])  # (c)

    drive(w, observe)
