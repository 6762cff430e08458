"""A plain, readable scheduler for the canonical API (API.md), written straight from RULES.md.

The sandbox tests use it as the well-behaved submission. It imports nothing from the project.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable


class SequenceStatus(enum.Enum):
    WAITING = "WAITING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


class Sequence:
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


class Scheduler:
    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int, max_num_batched_tokens: int,
                 sample_fn: Callable[[Sequence], int], eos: int | None = None) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.finished: list[Sequence] = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._batch: list[tuple[Sequence, int]] = []

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def _try_grow(self, seq: Sequence, tokens: int) -> bool:
        need = -(-tokens // self.block_size) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need > self.num_blocks:
            return False
        seq.num_blocks += need
        self.blocks_used += need
        return True

    def _preempt(self, seq: Sequence) -> None:
        self.running.remove(seq)
        self.blocks_used -= seq.num_blocks
        seq.num_blocks = 0
        seq.num_computed = 0
        seq.status = SequenceStatus.WAITING
        self.waiting.appendleft(seq)
        self.num_preemptions += 1

    def schedule(self) -> dict[str, int]:
        budget = self.max_num_batched_tokens
        batch: list[tuple[Sequence, int]] = []
        i = 0
        while i < len(self.running) and budget > 0:  # phase 1
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            skipped = False
            while not self._try_grow(seq, seq.num_computed + n):
                victim = self.running[-1]
                self._preempt(victim)
                if victim is seq:
                    skipped = True
                    break
            if not skipped:
                batch.append((seq, n))
                budget -= n
                i += 1
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:  # phase 2
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self._try_grow(seq, seq.num_computed + n):
                break
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            batch.append((seq, n))
            budget -= n
        self._batch = batch
        return {seq.seq_id: n for seq, n in batch}

    def update(self) -> list[Sequence]:
        done = []
        for seq, n in self._batch:
            seq.num_computed += n
            if seq.num_computed == seq.num_tokens:
                token = self.sample_fn(seq)
                seq.output.append(token)
                if token == self.eos or len(seq.output) >= seq.max_tokens:
                    seq.status = SequenceStatus.FINISHED
                    self.running.remove(seq)
                    self.blocks_used -= seq.num_blocks
                    seq.num_blocks = 0
                    self.finished.append(seq)
                    done.append(seq)
        self._batch = []
        return done
