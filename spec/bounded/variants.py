"""The reference model with one catalog bug injected, for ``prove --inject`` and the model checker.

A plain re-implementation of schedule() and update() with a switch per bug; with
no bug it must agree with ``spec.rules`` step for step (tests/proofs checks this).
The z3 encoding in ``encode`` follows the same switches, so a counterexample
found by the solver can be replayed here. spec/rules.py itself is never changed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from spec.model import Batch, Sample, Seq, State, Status
from spec.rules import add, blocks_for, initial_state
from spec.trace import Workload

# Bugs of conformance.catalog whose behaviour the variant model (and the encoding) expresses.
EXPRESSIBLE: tuple[str, ...] = (
    "blocks_by_num_tokens", "preempt_keeps_num_computed", "preempt_clears_output", "preempt_to_tail",
    "sample_during_prefill", "phase2_continue", "eos_before_append", "no_admission_after_preemption",
    "budget_not_shared", "max_num_seqs_off_by_one", "victim_first", "decode_not_charged", "reserve_whole_prompt",
    "grow_on_mod_one", "capacity_off_by_one", "finish_keeps_blocks", "preempt_keeps_blocks_used",
    "max_tokens_off_by_one", "no_chunked_prefill",
)
# Bugs that are code shapes, not behaviours of the transition function: why each is left out.
NOT_EXPRESSIBLE: dict[str, str] = {
    "batch_not_copied": "aliasing of the returned dict: the transition system has no caller that mutates it",
    "running_snapshot_loop": "what a stale copy of running does with a sequence already preempted depends on "
                             "the code (it may crash, double-schedule or be skipped); no single behaviour to encode",
    "skip_self_keeps_going": "after the sequence preempts itself it is no longer running, and what the loop then "
                             "retries is code-specific",
}


def _need(state: State, seq: Seq, tokens: int, bug: str | None) -> int:
    want = blocks_for(state.config, tokens)
    if bug == "grow_on_mod_one" and seq.num_blocks:  # a held sequence gains one block, only at tokens % bs == 1
        return 1 if tokens % state.config.block_size == 1 else 0
    return want - seq.num_blocks


def _fits(state: State, seq: Seq, tokens: int, bug: str | None) -> bool:
    need = _need(state, seq, tokens, bug)
    if need <= 0:
        return True
    if bug == "capacity_off_by_one":
        return state.blocks_used + need < state.config.num_blocks
    return state.blocks_used + need <= state.config.num_blocks


def _grow(state: State, seq: Seq, tokens: int, bug: str | None) -> tuple[State, Seq]:
    need = max(_need(state, seq, tokens, bug), 0)
    return replace(state, blocks_used=state.blocks_used + need), replace(seq, num_blocks=seq.num_blocks + need)


def _preempt(state: State, pos: int, bug: str | None) -> tuple[State, Seq]:
    """Preempt running[pos] (running[-1] unless victim_first) with the bug's variant of the reset."""
    victim = state.running[pos]
    requeued = replace(victim, num_blocks=0, status=Status.WAITING,
                       num_computed=victim.num_computed if bug == "preempt_keeps_num_computed" else 0,
                       output=() if bug == "preempt_clears_output" else victim.output)
    waiting = state.waiting + (requeued,) if bug == "preempt_to_tail" else (requeued,) + state.waiting
    freed = 0 if bug == "preempt_keeps_blocks_used" else victim.num_blocks
    return replace(state, running=state.running[:pos] + state.running[pos + 1:], waiting=waiting,
                   blocks_used=state.blocks_used - freed, num_preemptions=state.num_preemptions + 1), victim


def _put(batch: Batch, seq_id: str, n: int) -> Batch:
    """batch[seq_id] = n with dict semantics: a sequence batched again (victim_first) keeps its place."""
    if seq_id in dict(batch):
        return tuple((i, n if i == seq_id else k) for i, k in batch)
    return batch + ((seq_id, n),)


def _twice(batch: Batch, seq_id: str, twice: tuple[str, ...]) -> tuple[str, ...]:
    """Note `seq_id` if it is already in the batch: the dict hides the second entry, I2 must not."""
    return twice + (seq_id,) if seq_id in dict(batch) and seq_id not in twice else twice


def _charge(n: int, bug: str | None, decode: bool = False) -> int:
    """What n costs the budget; decode_not_charged lets a decode (phase 1, output so far, n == 1) go free."""
    return 0 if bug == "decode_not_charged" and decode and n == 1 else n


def schedule(state: State, bug: str | None = None) -> tuple[State, Batch]:
    """Phase 1 then phase 2, as spec.rules.schedule, with `bug` injected."""
    after, batch, _ = schedule_counted(state, bug)
    return after, batch


def schedule_counted(state: State, bug: str | None = None) -> tuple[State, Batch, tuple[str, ...]]:
    """schedule(), plus the sequences put into the batch more than once (victim_first readmits a victim).

    The batch keeps dict semantics, as a submission's would; the third result is what
    the encoding's "each sequence once" (I2) sees and the dict does not.
    """
    twice: tuple[str, ...] = ()
    budget = state.config.max_num_batched_tokens
    preemptions = state.num_preemptions
    batch: Batch = ()
    i = 0
    while i < len(state.running) and budget > 0:  # P1
        seq = state.running[i]
        n = min(seq.remaining, budget)
        tokens = seq.num_tokens if bug == "blocks_by_num_tokens" else seq.num_computed + n
        skipped = False
        while not _fits(state, seq, tokens, bug):  # P1.preempt
            pos = 0 if bug == "victim_first" else len(state.running) - 1
            state, victim = _preempt(state, pos, bug)
            if victim.seq_id == seq.seq_id:  # P1.skip_self
                skipped = True
                break
            if pos < i:
                i -= 1
        if not skipped:
            state, seq = _grow(state, seq, tokens, bug)
            state = replace(state, running=state.running[:i] + (seq,) + state.running[i + 1:])
            twice = _twice(batch, seq.seq_id, twice)
            batch = _put(batch, seq.seq_id, n)
            budget -= _charge(n, bug, decode=bool(seq.output))
            i += 1
    if bug == "budget_not_shared":
        budget = state.config.max_num_batched_tokens
    skip = 0
    admit = not (bug == "no_admission_after_preemption" and state.num_preemptions > preemptions)
    while admit and skip < len(state.waiting) and budget > 0:  # P2
        limit = len(state.running) > state.config.max_num_seqs if bug == "max_num_seqs_off_by_one" else \
            len(state.running) >= state.config.max_num_seqs
        if limit:  # P2.full
            break
        head = state.waiting[skip]
        n = min(head.remaining, budget)
        whole = bug in ("blocks_by_num_tokens", "reserve_whole_prompt")
        tokens = head.num_tokens if whole else head.num_computed + n
        unchunked = bug == "no_chunked_prefill" and head.remaining > budget
        if unchunked or not _fits(state, head, tokens, bug):  # P2.stop
            if bug == "phase2_continue":
                skip += 1
                continue
            break
        state, head = _grow(state, head, tokens, bug)
        head = replace(head, status=Status.RUNNING)
        state = replace(state, waiting=state.waiting[:skip] + state.waiting[skip + 1:],
                        running=state.running + (head,))
        twice = _twice(batch, head.seq_id, twice)
        batch = _put(batch, head.seq_id, n)
        budget -= _charge(n, bug)
    return replace(state, pending=batch), batch, twice


def update(state: State, sample: Sample, bug: str | None = None) -> tuple[State, tuple[Seq, ...]]:
    """Apply the pending batch, as spec.rules.update, with `bug` injected; a batched sequence no
    longer running (a victim_first victim) is skipped."""
    assert state.pending is not None, "update() without schedule()"
    done: list[Seq] = []
    for seq_id, n in state.pending:
        index = next((i for i, s in enumerate(state.running) if s.seq_id == seq_id), None)
        if index is None:
            continue
        seq = state.running[index]
        seq = replace(seq, num_computed=seq.num_computed + n)  # U.compute
        if seq.num_computed >= seq.num_tokens or bug == "sample_during_prefill":  # U.sample
            token = sample(seq_id, seq.output)
            eos = state.config.eos is not None and token == state.config.eos
            if not (eos and bug == "eos_before_append"):
                seq = replace(seq, output=seq.output + (token,))
            over = len(seq.output) > seq.max_tokens if bug == "max_tokens_off_by_one" else \
                len(seq.output) >= seq.max_tokens
            if eos or over:  # U.finish
                kept = bug == "finish_keeps_blocks"
                fin = replace(seq, num_blocks=seq.num_blocks if kept else 0, status=Status.FINISHED)
                state = replace(state, running=state.running[:index] + state.running[index + 1:],
                                finished=state.finished + (fin,),
                                blocks_used=state.blocks_used - (0 if kept else seq.num_blocks))
                done.append(fin)
                continue
        state = replace(state, running=state.running[:index] + (seq,) + state.running[index + 1:])
    return replace(state, pending=None), tuple(done)


@dataclass(frozen=True, slots=True)
class VariantStep:
    """One schedule() + update() of the variant model."""

    step: int
    before: State  # after this step's arrivals
    batch: Batch
    after_schedule: State
    finished: tuple[str, ...]
    after_update: State
    batched_twice: tuple[str, ...] = ()  # put into the batch more than once; the dict kept one entry


def run(workload: Workload, bug: str | None = None, max_steps: int = 200) -> tuple[VariantStep, ...]:
    """Run the variant model on a workload until it drains or `max_steps` (a buggy run may never drain)."""
    pending = sorted(workload.requests, key=lambda r: r.arrival)
    state = initial_state(workload.config)
    steps: list[VariantStep] = []
    step = 0
    while (pending or state.waiting or state.running) and step < max_steps:
        step += 1
        while pending and pending[0].arrival == step:
            r = pending.pop(0)
            state = add(state, r.seq_id, r.prompt_len, r.max_tokens)
        before = state
        mid, batch, twice = schedule_counted(state, bug)
        state, done = update(mid, workload.sample, bug)
        steps.append(VariantStep(step, before, batch, mid, tuple(s.seq_id for s in done), state, twice))
    return tuple(steps)
