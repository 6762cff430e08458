"""Drive the model call by call on a workload, checking every invariant after every call."""

from spec import add, check_all_finished, check_state, check_step, initial_state, schedule, update
from spec.trace import Workload, liveness_bound


def drive(w: Workload, observe=None):
    """Run `w` step by step; return (final state, steps, violations). `observe(kind, before, batch, after)`."""
    state = initial_state(w.config)
    pending = sorted(w.requests, key=lambda r: r.arrival)
    violations = []
    step = 0
    while pending or state.waiting or state.running:
        step += 1
        assert step <= liveness_bound(w.requests), "ran past the liveness bound"
        while pending and pending[0].arrival == step:
            r = pending.pop(0)
            before, state = state, add(state, r.seq_id, r.prompt_len, r.max_tokens)
            violations += check_step(before, (), state)
        before = state
        state, batch = schedule(state)
        violations += check_step(before, batch, state)
        if observe:
            observe("schedule", before, batch, state)
        before = state
        state, _ = update(state, w.sample)
        violations += check_step(before, before.pending, state)
        if observe:
            observe("update", before, before.pending, state)
    violations += check_state(state) + check_all_finished(state)
    return state, step, violations
