"""The card's six invariants I1..I6, as checks that report structured violations.

State invariants (I1, I3, I6) hold of every state after every call. Step
properties (I2, I4, I5 and the sampling half of I3) relate the state before a
call, the batch, and the state after it: for schedule() the batch is the one it
returned, for update() the one it applied (``before.pending``). An empty result
means the invariant holds. See docs/rules.md, "Invariants".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from spec.model import Batch, Seq, State, Status


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken invariant: which one, about which sequence, expected vs actual."""

    invariant: str  # "I1".."I6" or "OUT"
    seq_id: str | None  # the sequence concerned, None for a whole-state property
    expected: object
    actual: object
    message: str

    def __str__(self) -> str:
        return f"[{self.invariant}] {self.message}"


StateInvariant = Callable[[State], Iterator[Violation]]
StepProperty = Callable[[State, Batch, State], Iterator[Violation]]


def _ids(seqs: tuple[Seq, ...]) -> list[str]:
    return [s.seq_id for s in seqs]


# --- state invariants ------------------------------------------------------------------


def i1_blocks_accounted(s: State) -> Iterator[Violation]:
    """I1: blocks_used == sum(num_blocks of running) <= num_blocks; only running sequences hold blocks.

    Each running sequence holds exactly the blocks for the tokens it has computed
    plus those scheduled for it. Broken, blocks leak (the queue stalls) or are
    over-allocated (a real system runs out of memory).
    """
    held = sum(q.num_blocks for q in s.running)
    if s.blocks_used != held:
        yield Violation("I1", None, held, s.blocks_used,
                        f"blocks_used is {s.blocks_used} but running sequences hold {held}")
    if s.blocks_used > s.config.num_blocks:
        yield Violation("I1", None, f"<= {s.config.num_blocks}", s.blocks_used,
                        f"blocks_used {s.blocks_used} exceeds num_blocks {s.config.num_blocks}")
    for q in s.waiting + s.finished:
        if q.num_blocks != 0:
            yield Violation("I1", q.seq_id, 0, q.num_blocks,
                            f"{q.seq_id} is {q.status.name} but holds {q.num_blocks} blocks")
    pending = dict(s.pending or ())
    for q in s.running:
        tokens = q.num_computed + pending.get(q.seq_id, 0)
        want = -(-tokens // s.config.block_size)  # ceil, computed here: a bug in rules.blocks_for must show
        if q.num_blocks != want:
            yield Violation("I1", q.seq_id, want, q.num_blocks,
                            f"{q.seq_id} holds {q.num_blocks} blocks for {tokens} tokens, needs exactly {want}")


def i3_computed_within_tokens(s: State) -> Iterator[Violation]:
    """I3: 0 <= num_computed <= num_tokens, and a waiting sequence has computed nothing.

    Broken, a sequence samples in the middle of its prefill or reads KV it no longer has.
    """
    for q in s.seqs():
        if not 0 <= q.num_computed <= q.num_tokens:
            yield Violation("I3", q.seq_id, f"0..{q.num_tokens}", q.num_computed,
                            f"{q.seq_id}.num_computed is {q.num_computed}, outside 0..num_tokens {q.num_tokens}")
    for q in s.waiting:
        if q.num_computed != 0:
            yield Violation("I3", q.seq_id, 0, q.num_computed,
                            f"{q.seq_id} is waiting with num_computed {q.num_computed}; its KV was freed")


def i6_one_queue_each(s: State) -> Iterator[Violation]:
    """I6: every sequence is in exactly one of waiting, running, finished, with the matching status.

    Broken, a request is scheduled twice or after it finished.
    """
    seen: dict[str, str] = {}
    for name, queue, status in (("waiting", s.waiting, Status.WAITING), ("running", s.running, Status.RUNNING),
                                ("finished", s.finished, Status.FINISHED)):
        for q in queue:
            if q.seq_id in seen:
                yield Violation("I6", q.seq_id, "one queue", f"{seen[q.seq_id]} and {name}",
                                f"{q.seq_id} is in {seen[q.seq_id]} and in {name}")
            seen[q.seq_id] = name
            if q.status is not status:
                yield Violation("I6", q.seq_id, status.name, q.status.name,
                                f"{q.seq_id} is in {name} with status {q.status.name}")
    if len(s.running) > s.config.max_num_seqs:
        yield Violation("I6", None, f"<= {s.config.max_num_seqs}", len(s.running),
                        f"{len(s.running)} sequences running, max_num_seqs is {s.config.max_num_seqs}")


# --- step properties -------------------------------------------------------------------


def i2_batch_within_budget(before: State, batch: Batch, after: State) -> Iterator[Violation]:
    """I2: the batch spends at most max_num_batched_tokens, each n >= 1, each sequence once.

    Broken, a step overruns activation memory, or an n == 0 row wastes a slot.
    """
    total = sum(n for _, n in batch)
    if total > before.config.max_num_batched_tokens:
        yield Violation("I2", None, f"<= {before.config.max_num_batched_tokens}", total,
                        f"batch spends {total} tokens, budget is {before.config.max_num_batched_tokens}")
    seen: set[str] = set()
    held = before.by_id()
    for seq_id, n in batch:
        if n < 1:
            yield Violation("I2", seq_id, ">= 1", n, f"{seq_id} is scheduled with n = {n}")
        if seq_id in seen:
            yield Violation("I2", seq_id, "once", "twice", f"{seq_id} appears twice in the batch")
        seen.add(seq_id)
        q = held.get(seq_id)
        if q is None or q.status is Status.FINISHED:
            yield Violation("I2", seq_id, "a waiting or running sequence", q and q.status.name,
                            f"{seq_id} is scheduled but is not waiting or running")


def i3_sampled_only_when_caught_up(before: State, batch: Batch, after: State) -> Iterator[Violation]:
    """I3: a scheduled sequence samples exactly when num_computed reaches num_tokens, else never.

    Broken, a chunked prefill samples early, adding tokens and reaching max_tokens too soon.
    """
    is_update = before.pending is not None
    scheduled = dict(batch) if is_update else {}
    now = after.by_id()
    for q in before.seqs():
        a = now.get(q.seq_id)
        if a is None:
            continue
        grew = len(a.output) - len(q.output)
        n = scheduled.get(q.seq_id)
        should = n is not None and q.num_computed + n == q.num_tokens
        if grew != int(should):
            why = ("it was not scheduled" if n is None else
                   f"num_computed {q.num_computed} + n {n} {'==' if should else '!='} num_tokens {q.num_tokens}")
            yield Violation("I3", q.seq_id, int(should), grew,
                            f"{q.seq_id}'s output grew by {grew} in {'update' if is_update else 'schedule'}, "
                            f"expected {int(should)}: {why}")


def i4_preemption_keeps_output(before: State, batch: Batch, after: State) -> Iterator[Violation]:
    """I4: preemption resets only num_computed, num_blocks and status; output is kept.

    Broken, the final output differs from a run without preemption (the hardest bug to find).
    """
    running_before = {q.seq_id for q in before.running}
    now = after.by_id()
    for q in before.seqs():
        a = now.get(q.seq_id)
        if a is None:
            yield Violation("I4", q.seq_id, "present", "missing", f"{q.seq_id} disappeared from every queue")
            continue
        if (a.prompt_len, a.max_tokens) != (q.prompt_len, q.max_tokens):
            yield Violation("I4", q.seq_id, (q.prompt_len, q.max_tokens), (a.prompt_len, a.max_tokens),
                            f"{q.seq_id}'s prompt_len/max_tokens changed")
        if a.output[:len(q.output)] != q.output:
            yield Violation("I4", q.seq_id, list(q.output), list(a.output),
                            f"{q.seq_id}.output was {list(q.output)}, now {list(a.output)}: tokens were lost")
        preempted = q.seq_id in running_before and a.status is Status.WAITING
        if preempted and (a.num_computed, a.num_blocks) != (0, 0):
            yield Violation("I4", q.seq_id, (0, 0), (a.num_computed, a.num_blocks),
                            f"{q.seq_id} was preempted but kept num_computed {a.num_computed}, "
                            f"num_blocks {a.num_blocks}")


def i5_preempted_to_head(before: State, batch: Batch, after: State) -> Iterator[Violation]:
    """I5: preempted sequences go to the head of waiting; waiting otherwise keeps arrival order.

    Expected waiting after schedule(): the preempted ones (in running order) + the old waiting
    queue + new arrivals, minus the admitted prefix; update() leaves it as it was. Broken,
    preempted requests starve.
    """
    if before.pending is not None:  # update() neither preempts nor admits
        want, got = _ids(before.waiting), _ids(after.waiting)
        if got != want:
            yield Violation("I5", None, want, got, f"update() changed waiting from {want} to {got}; it only "
                                                   "advances and finishes running sequences")
        return
    old = set(_ids(before.seqs()))
    now = after.by_id()
    preempted = [q.seq_id for q in before.running if (a := now.get(q.seq_id)) and a.status is Status.WAITING]
    arrivals = [q.seq_id for q in after.waiting if q.seq_id not in old]
    expected = preempted + _ids(before.waiting) + arrivals
    running_before = set(_ids(before.running))
    admitted = [seq_id for seq_id, _ in batch if seq_id not in running_before]
    want = expected[len(admitted):]
    got = _ids(after.waiting)
    if expected[:len(admitted)] != admitted or got != want:
        yield Violation("I5", None, want, got,
                        f"waiting is {got}, expected {want} (preempted {preempted} to the head, admitted {admitted})")


STATE_INVARIANTS: tuple[StateInvariant, ...] = (i1_blocks_accounted, i3_computed_within_tokens, i6_one_queue_each)
STEP_PROPERTIES: tuple[StepProperty, ...] = (
    i2_batch_within_budget, i3_sampled_only_when_caught_up, i4_preemption_keeps_output, i5_preempted_to_head)


def check_state(s: State) -> list[Violation]:
    """Every state invariant's violations, in invariant order."""
    return [v for inv in STATE_INVARIANTS for v in inv(s)]


def check_step(before: State, batch: Batch, after: State) -> list[Violation]:
    """Every state invariant of `after` and every step property of the triple."""
    return check_state(after) + [v for prop in STEP_PROPERTIES for v in prop(before, batch, after)]


def check_all_finished(s: State) -> list[Violation]:
    """I1's last clause: once every request has finished, no block is held."""
    if not s.waiting and not s.running and s.blocks_used != 0:
        return [Violation("I1", None, 0, s.blocks_used, f"all finished but blocks_used is {s.blocks_used}")]
    return []


def outputs_equivalent(a: Mapping[str, tuple[int, ...]], b: Mapping[str, tuple[int, ...]]) -> list[Violation]:
    """Output equivalence: both runs finished the same sequences with token-identical outputs."""
    out = []
    for seq_id in sorted(set(a) | set(b)):
        left, right = a.get(seq_id), b.get(seq_id)
        if left != right:
            want = None if left is None else list(left)
            got = None if right is None else list(right)
            out.append(Violation("OUT", seq_id, want, got,
                                 f"{seq_id}'s output is {got}, expected {want} as without preemption"))
    return out
