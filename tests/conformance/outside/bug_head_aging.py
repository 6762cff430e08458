"""P07 scheduler: plain lists + dataclasses.

Straightforward translation of the card: a dataclass per request, the
three queues as a deque and two lists, and the batch kept as a list of
(sequence, n) pairs between schedule() and update().
"""
from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Optional

# anti-starvation: a waiting head that has not fitted for this many steps
# lets a smaller request behind it go first, so the queue keeps moving
HEAD_PATIENCE = 1000


class SequenceStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(eq=False)
class Sequence:
    seq_id: str
    prompt_len: int
    max_tokens: int
    output: list = field(default_factory=list)
    num_computed: int = 0
    num_blocks: int = 0
    status: SequenceStatus = SequenceStatus.WAITING

    @property
    def num_tokens(self) -> int:
        return self.prompt_len + len(self.output)


class Scheduler:
    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,
                 max_num_batched_tokens: int,
                 sample_fn: Callable[[Sequence], int],
                 eos: Optional[int] = None):
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos

        self.waiting: deque = deque()
        self.running: list = []
        self.finished: list = []
        self.blocks_used = 0
        self.num_preemptions = 0

        self._batch: list = []  # [(seq, n)] of the last schedule()
        self._head_blocked = 0  # consecutive steps the head did not fit

    # -- helpers -------------------------------------------------------
    def blocks_for(self, t: int) -> int:
        return -(-t // self.block_size)

    def try_grow(self, seq: Sequence, t: int) -> bool:
        need = self.blocks_for(t) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need <= self.num_blocks:
            self.blocks_used += need
            seq.num_blocks += need
            return True
        return False

    def preempt(self) -> Sequence:
        victim = self.running.pop()
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim

    # -- API -----------------------------------------------------------
    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def schedule(self) -> dict:
        batch = []
        budget = self.max_num_batched_tokens

        # phase 1: running sequences, in admission order
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if self.try_grow(seq, seq.num_computed + n):
                batch.append((seq, n))
                budget -= n
                i += 1
                continue
            victim = self.preempt()
            if victim is seq:
                # it preempted itself; running is now shorter, i stays
                continue

        # phase 2: waiting, strict FCFS
        while self.waiting and budget > 0:
            if len(self.running) >= self.max_num_seqs:
                break
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self.try_grow(seq, seq.num_computed + n):
                self._head_blocked += 1
                if self._head_blocked <= HEAD_PATIENCE or len(self.waiting) < 2:
                    break
                seq = self.waiting[1]
                n = min(seq.num_tokens - seq.num_computed, budget)
                if not self.try_grow(seq, seq.num_computed + n):
                    break
                del self.waiting[1]
                seq.status = SequenceStatus.RUNNING
                self.running.append(seq)
                batch.append((seq, n))
                budget -= n
                break
            self._head_blocked = 0
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            batch.append((seq, n))
            budget -= n

        self._batch = batch
        return {seq.seq_id: n for seq, n in batch}

    def update(self) -> list:
        done = []
        batch, self._batch = self._batch, []
        for seq, n in batch:
            seq.num_computed += n
            if seq.num_computed < seq.num_tokens:
                continue
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if (self.eos is not None and tok == self.eos) \
                    or len(seq.output) >= seq.max_tokens:
                seq.status = SequenceStatus.FINISHED
                self.running.remove(seq)
                self.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
                self.finished.append(seq)
                done.append(seq)
        return done
