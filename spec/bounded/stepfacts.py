"""What one call of a phase, of schedule() or of update() must keep, as predicates over a ``Step``.

The CrossHair contracts of spec/bounded/contracts.py state their post-conditions with these, one
predicate a line, each restating part of I1..I6 or of the derived facts (docs/proofs.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from spec.model import Batch, Seq, State, Status
from spec.rules import chunk, try_grow


@dataclass(frozen=True, slots=True)
class Step:
    """One call: the state before, the batch, the state after, and the tokens it had and left.

    After a phase, `after.pending` is the batch of the whole step so far, as I1 needs it.
    """

    before: State
    batch: Batch
    after: State
    budget: int  # tokens the phase was given
    left: int  # tokens it did not spend


def ids(seqs: tuple[Seq, ...]) -> list[str]:
    return [q.seq_id for q in seqs]


def spent(step: Step) -> bool:
    """The batch spends exactly what the phase took from its budget, and no more than it had (I2)."""
    return step.left >= 0 and sum(n for _, n in step.batch) == step.budget - step.left


def within_limits(step: Step) -> bool:
    """blocks_used <= num_blocks (I1) and len(running) <= max_num_seqs (I6) after the call."""
    after = step.after
    return after.blocks_used <= after.config.num_blocks and len(after.running) <= after.config.max_num_seqs


def preempted_to_head(step: Step) -> bool:
    """The preempted sequences head waiting in running order, reset to (0, 0) with their output (I4, I5)."""
    kept = set(ids(step.after.running))
    gone = [q for q in step.before.running if q.seq_id not in kept]
    head = step.after.waiting[:len(gone)]
    return (ids(step.after.waiting) == ids(tuple(gone)) + ids(step.before.waiting)
            and all(a == replace(q, num_computed=0, num_blocks=0, status=Status.WAITING)
                    for q, a in zip(gone, head, strict=True)))


def all_kept_run(step: Step) -> bool:
    """Phase 1 schedules every running sequence it does not preempt, in order (fact a: the budget never stops it)."""
    kept = ids(step.after.running)
    return [seq_id for seq_id, _ in step.batch] == kept == ids(step.before.running)[:len(kept)]


def victim_freed(step: Step) -> bool:
    """preempt returns exactly the blocks running[-1] held."""
    return step.after.blocks_used == step.before.blocks_used - step.before.running[-1].num_blocks


def fcfs(step: Step) -> bool:
    """Phase 2 admits a prefix of waiting after the running, and stops only for P2.full, P2.stop or the budget."""
    before, after = step.before, step.after
    admitted = [seq_id for seq_id, _ in step.batch]
    if admitted != ids(before.waiting)[:len(admitted)] or after.running[:len(before.running)] != before.running:
        return False
    if len(after.running) > after.config.max_num_seqs:
        return False
    if not after.waiting or step.left == 0 or len(after.running) == after.config.max_num_seqs:
        return True
    head = after.waiting[0]
    return try_grow(after, head, head.num_computed + chunk(head, step.left)) is None


def finish_frees(step: Step) -> bool:
    """update(): each sequence that finished holds no block, and blocks_used drops by what they held."""
    done = step.after.finished[len(step.before.finished):]
    held = sum(q.num_blocks for q in step.before.running if q.seq_id in ids(done))
    return (step.after.pending is None and all(q.num_blocks == 0 for q in done)
            and step.after.blocks_used == step.before.blocks_used - held)
