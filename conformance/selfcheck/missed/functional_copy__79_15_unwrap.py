"""Missed mutant functional_copy.py:79:15:unwrap:
`list(self.q.running)` -> `self.q.running`.

Why it is a bug: docs/api.md fixes the container types; the suite reads the queue without checking that it is the type docs/api.md names.
The suite passes it (profile quick); the original style file and docs/rules.md and docs/api.md disagree.
"""
# ruff: noqa
# mypy: ignore-errors
# The code below is the unparsed mutant, one change away from its style file.
# Smallest workload found that shows it: num_blocks=1 block_size=1 max_num_seqs=1 max_num_batched_tokens=1 eos=None; arrivals r<i>(prompt_len,max_tokens)@step: r0(1,1)@1
# First difference: event 0: original ('schedule', 1, (('r0', 1),), ((), ('r0',), (), 1, 0, (('r0', (), 0, 1, 'RUNNING', 1),), ('deque', 'list', 'list')), 'dict') vs mutant ('schedule', 1, (('r0', 1),), ((), ('r0',), (), 1, 0, (('r0', (), 0, 1, 'RUNNING', 1),), ('deque', 'tuple', 'list')), 'dict')
from __future__ import annotations
import enum
from collections import deque
from collections.abc import Callable
from typing import NamedTuple

class SequenceStatus(enum.Enum):
    """Where a sequence is: one of the three queues."""
    WAITING = 'W'
    RUNNING = 'R'
    FINISHED = 'F'

class Sequence:
    """One request: prompt, generated output and its KV bookkeeping."""

    def __init__(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.seq_id = seq_id
        self.prompt_len = prompt_len
        self.max_tokens = max_tokens
        self.output: list[int] = []
        self.num_computed = 0
        self.num_blocks = 0
        self.status = SequenceStatus.WAITING

    @property
    def num_tokens(self) -> int:
        return self.prompt_len + len(self.output)

class Queues(NamedTuple):
    """The three queues and the block counter, as one value."""
    waiting: tuple[Sequence, ...]
    running: tuple[Sequence, ...]
    finished: tuple[Sequence, ...]
    blocks_used: int

def without(items: tuple[Sequence, ...], seq: Sequence) -> tuple[Sequence, ...]:
    """Return `items` minus `seq` (by identity)."""
    return tuple((item for item in items if item is not seq))

def blocks_for(tokens: int, block_size: int) -> int:
    return (tokens + block_size - 1) // block_size

class Scheduler:
    """Schedules by rebinding immutable queue values."""

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int, max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int], eos: int | None=None) -> None:
        self.limits = (num_blocks, block_size, max_num_seqs, max_num_batched_tokens)
        self.sample_fn = sample_fn
        self.eos = eos
        self.q = Queues((), (), (), 0)
        self.num_preemptions = 0
        self.batch: tuple[tuple[Sequence, int], ...] = ()

    @property
    def waiting(self) -> deque[Sequence]:
        return deque(self.q.waiting)

    @property
    def running(self) -> list[Sequence]:
        return self.q.running

    @property
    def finished(self) -> list[Sequence]:
        return list(self.q.finished)

    @property
    def blocks_used(self) -> int:
        return self.q.blocks_used

    def add(self, seq: Sequence) -> None:
        self.q = self.q._replace(waiting=self.q.waiting + (seq,))

    def grown(self, q: Queues, seq: Sequence, tokens: int) -> Queues | None:
        """Return the queues after `seq` holds blocks for `tokens`, or None if they do not fit."""
        num_blocks, block_size = (self.limits[0], self.limits[1])
        need = blocks_for(tokens, block_size) - seq.num_blocks
        if need <= 0:
            return q
        if q.blocks_used + need > num_blocks:
            return None
        seq.num_blocks = seq.num_blocks + need
        return q._replace(blocks_used=q.blocks_used + need)

    def preempted(self, q: Queues, victim: Sequence) -> Queues:
        freed = victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.num_preemptions = self.num_preemptions + 1
        return Queues((victim,) + q.waiting, without(q.running, victim), q.finished, q.blocks_used - freed)

    def schedule(self) -> dict[str, int]:
        max_num_seqs, budget = (self.limits[2], self.limits[3])
        q = self.q
        batch: tuple[tuple[Sequence, int], ...] = ()
        i = 0
        while i < len(q.running) and budget > 0:
            seq = q.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            after = self.grown(q, seq, seq.num_computed + n)
            while after is None:
                victim = q.running[-1]
                q = self.preempted(q, victim)
                if victim is seq:
                    break
                after = self.grown(q, seq, seq.num_computed + n)
            if after is None:
                continue
            q = after
            batch = batch + ((seq, n),)
            budget = budget - n
            i = i + 1
        while q.waiting and budget > 0 and (len(q.running) < max_num_seqs):
            head = q.waiting[0]
            n = min(head.num_tokens - head.num_computed, budget)
            after = self.grown(q, head, head.num_computed + n)
            if after is None:
                break
            head.status = SequenceStatus.RUNNING
            q = after._replace(waiting=after.waiting[1:], running=after.running + (head,))
            batch = batch + ((head, n),)
            budget = budget - n
        self.q = q
        self.batch = batch
        return dict(((seq.seq_id, n) for seq, n in batch))

    def update(self) -> list[Sequence]:
        q = self.q
        done: tuple[Sequence, ...] = ()
        for seq, n in self.batch:
            seq.num_computed = seq.num_computed + n
            if seq.num_computed == seq.num_tokens:
                tok = self.sample_fn(seq)
                seq.output.append(tok)
                if tok == self.eos or len(seq.output) >= seq.max_tokens:
                    seq.status = SequenceStatus.FINISHED
                    q = Queues(q.waiting, without(q.running, seq), q.finished + (seq,), q.blocks_used - seq.num_blocks)
                    seq.num_blocks = 0
                    done = done + (seq,)
        self.q = q
        self.batch = ()
        return list(done)
