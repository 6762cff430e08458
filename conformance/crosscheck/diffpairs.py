"""Function pairs with one int signature, the spec's and impl/'s, for ``crosshair diffbehavior``.

Each function returns a plain value (batches, finished ids, counters and every sequence's
fields), so equal results mean the two schedulers behave the same on those ints. diffbehavior
has no preconditions: outside the small domain both functions return None. A bounded search,
not a proof ("No differences found" after the time limit):

    python -m crosshair diffbehavior --per_condition_timeout=120 \
        conformance.crosscheck.diffpairs.spec_run conformance.crosscheck.diffpairs.impl_run
    python -m crosshair diffbehavior --per_condition_timeout=120 \
        conformance.crosscheck.diffpairs.spec_step conformance.crosscheck.diffpairs.impl_step

``victim_first_run`` and ``victim_first_step`` run the spec with the catalog's victim_first fault
(spec/faults.py: the victim is running[0]), stated once: diffbehavior must report a difference
against impl/.
"""

from __future__ import annotations

import types

import spec.rules
from impl.scheduler import InvalidRequest as ImplInvalidRequest
from impl.scheduler import Scheduler, Sequence, SequenceStatus
from spec import faults
from spec.bounded.contracts import EOS, RUN_STEPS, between_steps, literal
from spec.errors import InvalidRequest
from spec.model import Config, State

Seqs = tuple[tuple[str, int, int, str, tuple[int, ...]], ...]  # (seq_id, num_computed, num_blocks, status, output)
Snapshot = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], int, int, Seqs]
Outcome = tuple[tuple[tuple[tuple[str, int], ...], tuple[str, ...]], ...]  # per step: (batch, finished ids)


def _token(seq_id: str, output_len: int, eos_at: dict[str, int]) -> int:
    """The model of the LLM: eos as output number eos_at[seq_id], otherwise 100 + position."""
    return EOS if output_len == eos_at[seq_id] else 100 + output_len


def _spec_snapshot(state: State) -> Snapshot:
    seqs = sorted((q.seq_id, q.num_computed, q.num_blocks, q.status.name, q.output) for q in state.seqs())
    return (tuple(q.seq_id for q in state.waiting), tuple(q.seq_id for q in state.running),
            tuple(q.seq_id for q in state.finished), state.blocks_used, state.num_preemptions, tuple(seqs))


def _impl_snapshot(sched: Scheduler) -> Snapshot:
    every = list(sched.waiting) + sched.running + sched.finished
    seqs = sorted((q.seq_id, q.num_computed, q.num_blocks, q.status.name, tuple(q.output)) for q in every)
    return (tuple(q.seq_id for q in sched.waiting), tuple(q.seq_id for q in sched.running),
            tuple(q.seq_id for q in sched.finished), sched.blocks_used, sched.num_preemptions, tuple(seqs))


# --- runs from the empty state: add, then RUN_STEPS x (schedule, update) ---------------------


def _run_domain(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, p0: int, m0: int, p1: int,
                m1: int, arrival1: int, eos0: int, eos1: int) -> bool:
    return (1 <= num_blocks <= 6 and 1 <= block_size <= 3 and 1 <= max_num_seqs <= 2 and 1 <= budget <= 6
            and 1 <= p0 <= 5 and 1 <= p1 <= 5 and 1 <= m0 <= 3 and 1 <= m1 <= 3
            and 0 <= arrival1 < RUN_STEPS and 0 <= eos0 <= 3 and 0 <= eos1 <= 3)


def _spec_run(rules: types.ModuleType, num_blocks: int, block_size: int, max_num_seqs: int, budget: int, p0: int,
              m0: int, p1: int, m1: int, arrival1: int, eos0: int, eos1: int) -> tuple[Outcome, Snapshot] | str | None:
    if not _run_domain(num_blocks, block_size, max_num_seqs, budget, p0, m0, p1, m1, arrival1, eos0, eos1):
        return None
    block_size = literal(block_size, 3)  # linear arithmetic for the solver; the same int
    eos_at = {"a": eos0, "b": eos1}
    steps = []
    try:
        state = rules.add(rules.initial_state(Config(num_blocks, block_size, max_num_seqs, budget, eos=EOS)),
                          "a", p0, m0)
        for k in range(RUN_STEPS):
            if k == arrival1:
                state = rules.add(state, "b", p1, m1)
            state, batch = rules.schedule(state)
            state, done = rules.update(state, lambda seq_id, output: _token(seq_id, len(output), eos_at))
            steps.append((batch, tuple(q.seq_id for q in done)))
    except InvalidRequest as e:
        return str(e)
    return tuple(steps), _spec_snapshot(state)


def spec_run(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, p0: int, m0: int, p1: int, m1: int,
             arrival1: int, eos0: int, eos1: int) -> tuple[Outcome, Snapshot] | str | None:
    """The spec on requests a (before step 0) and b (before step arrival1); a rejected add returns its message."""
    return _spec_run(spec.rules, num_blocks, block_size, max_num_seqs, budget, p0, m0, p1, m1, arrival1, eos0, eos1)


def _impl_run(cls: type[Scheduler], num_blocks: int, block_size: int, max_num_seqs: int, budget: int, p0: int,
              m0: int, p1: int, m1: int, arrival1: int, eos0: int, eos1: int) -> tuple[Outcome, Snapshot] | str | None:
    if not _run_domain(num_blocks, block_size, max_num_seqs, budget, p0, m0, p1, m1, arrival1, eos0, eos1):
        return None
    block_size = literal(block_size, 3)  # linear arithmetic for the solver; the same int
    eos_at = {"a": eos0, "b": eos1}
    sched = cls(num_blocks, block_size, max_num_seqs, budget, lambda q: _token(q.seq_id, len(q.output), eos_at),
                eos=EOS)
    steps = []
    try:
        sched.add(Sequence("a", p0, m0))
        for k in range(RUN_STEPS):
            if k == arrival1:
                sched.add(Sequence("b", p1, m1))
            batch = sched.schedule()
            done = sched.update()
            steps.append((tuple(batch.items()), tuple(q.seq_id for q in done)))
    except ImplInvalidRequest as e:
        return str(e)
    return tuple(steps), _impl_snapshot(sched)


def impl_run(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, p0: int, m0: int, p1: int, m1: int,
             arrival1: int, eos0: int, eos1: int) -> tuple[Outcome, Snapshot] | str | None:
    """impl/ on the same requests, samples and steps as spec_run."""
    return _impl_run(Scheduler, num_blocks, block_size, max_num_seqs, budget, p0, m0, p1, m1, arrival1, eos0, eos1)


def victim_first_run(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, p0: int, m0: int, p1: int,
                     m1: int, arrival1: int, eos0: int, eos1: int) -> tuple[Outcome, Snapshot] | str | None:
    """The spec with the catalog's victim_first fault (spec/faults.py) on the same inputs as impl_run: must differ
    (the faulty spec may also raise: it schedules a sequence it then preempts; a raise is returned as its name)."""
    try:
        return _spec_run(faults.load("victim_first"), num_blocks, block_size, max_num_seqs, budget, p0, m0, p1, m1,
                         arrival1, eos0, eos1)
    except Exception as e:  # noqa: BLE001 - a crash of the faulty spec is a difference like any other
        return f"raised {type(e).__name__}"


# --- one step from a state between steps (contracts.between_steps) ---------------------------


def _spec_step(rules: types.ModuleType, num_blocks: int, block_size: int, max_num_seqs: int, budget: int,
               running: int, p0: int, m0: int, o0: int, p1: int, m1: int, o1: int, computed: int, p2: int, m2: int,
               o2: int, eos_a: int, eos_b: int, eos_c: int) -> tuple[Outcome, Snapshot] | None:
    state = between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed,
                          p2, m2, o2)
    if state is None:
        return None
    eos = {"a": eos_a, "b": eos_b, "c": eos_c}
    state, batch = rules.schedule(state)
    state, done = rules.update(state, lambda seq_id, output: EOS if eos[seq_id] else 100 + len(output))
    return ((batch, tuple(q.seq_id for q in done)),), _spec_snapshot(state)


def spec_step(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, running: int, p0: int, m0: int,
              o0: int, p1: int, m1: int, o1: int, computed: int, p2: int, m2: int, o2: int,
              eos_a: int, eos_b: int, eos_c: int) -> tuple[Outcome, Snapshot] | None:
    """The spec's schedule() and update() from the state between_steps builds; eos_x != 0: x samples eos."""
    return _spec_step(spec.rules, num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1,
                      computed, p2, m2, o2, eos_a, eos_b, eos_c)


def _impl_step(cls: type[Scheduler], num_blocks: int, block_size: int, max_num_seqs: int, budget: int, running: int,
               p0: int, m0: int, o0: int, p1: int, m1: int, o1: int, computed: int, p2: int, m2: int, o2: int,
               eos_a: int, eos_b: int, eos_c: int) -> tuple[Outcome, Snapshot] | None:
    state = between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed,
                          p2, m2, o2)
    if state is None:
        return None
    eos = {"a": eos_a, "b": eos_b, "c": eos_c}
    config = state.config
    sched = cls(config.num_blocks, config.block_size, max_num_seqs, budget,
                lambda q: EOS if eos[q.seq_id] else 100 + len(q.output), eos=EOS)
    for queue, into in ((state.waiting, sched.waiting), (state.running, sched.running)):
        for q in queue:  # the same fields, on impl's mutable Sequence
            seq = Sequence(q.seq_id, q.prompt_len, q.max_tokens)
            seq.output, seq.num_computed, seq.num_blocks = list(q.output), q.num_computed, q.num_blocks
            seq.status = SequenceStatus[q.status.name]
            into.append(seq)
            sched._seq_ids.add(q.seq_id)
    sched.blocks_used = state.blocks_used
    batch = sched.schedule()
    done = sched.update()
    return ((tuple(batch.items()), tuple(q.seq_id for q in done)),), _impl_snapshot(sched)


def impl_step(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, running: int, p0: int, m0: int,
              o0: int, p1: int, m1: int, o1: int, computed: int, p2: int, m2: int, o2: int,
              eos_a: int, eos_b: int, eos_c: int) -> tuple[Outcome, Snapshot] | None:
    """impl/'s schedule() and update() from the same state, copied field by field into its Scheduler."""
    return _impl_step(Scheduler, num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1,
                      computed, p2, m2, o2, eos_a, eos_b, eos_c)


def victim_first_step(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, running: int, p0: int,
                      m0: int, o0: int, p1: int, m1: int, o1: int, computed: int, p2: int, m2: int, o2: int,
                      eos_a: int, eos_b: int, eos_c: int) -> tuple[Outcome, Snapshot] | None:
    """The spec with the victim_first fault from the same state as impl_step: must differ (or raise, named)."""
    try:
        return _spec_step(faults.load("victim_first"), num_blocks, block_size, max_num_seqs, budget, running, p0, m0,
                          o0, p1, m1, o1, computed, p2, m2, o2, eos_a, eos_b, eos_c)
    except Exception as e:  # noqa: BLE001 - as in victim_first_run
        return f"raised {type(e).__name__}"  # type: ignore[return-value]
