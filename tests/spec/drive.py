"""Drive the model call by call on a workload, checking every invariant after every call."""

from spec import add, check_all_finished, check_state, check_step, initial_state, schedule, update
from spec.feasible import liveness_bound
from spec.loop import Steps
from spec.trace import Workload


def drive(w: Workload, observe=None):
    """Run `w` step by step; return (final state, steps, violations). `observe(kind, before, batch, after)`."""
    state = initial_state(w.config)
    violations = []
    steps = Steps(w.requests, lambda r: r.arrival, lambda r: r.seq_id, liveness_bound(w.requests))
    for _, arrivals in steps:
        for r in arrivals:
            before, state = state, add(state, r.seq_id, r.prompt_len, r.max_tokens)
            violations += check_step(before, (), state)
        before = state
        state, batch = schedule(state)
        violations += check_step(before, batch, state)
        if observe:
            observe("schedule", before, batch, state)
        before = state
        state, done = update(state, w.sample)
        steps.finished(q.seq_id for q in done)
        violations += check_step(before, before.pending, state)
        if observe:
            observe("update", before, before.pending, state)
    assert steps.done, "ran past the liveness bound"
    step = steps.step
    violations += check_state(state) + check_all_finished(state)
    return state, step, violations
