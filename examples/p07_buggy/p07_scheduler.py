"""A student's P07 scheduler with one classic bug, for trying `schedcheck check` on.

It follows docs/api.md and the card everywhere except one line in `_preempt` (the card's
pitfall "抢占时把 output 也清空了"). Run:

    schedcheck check examples/p07_buggy/p07_scheduler.py
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable


class SequenceStatus(enum.Enum):
    WAITING = 0
    RUNNING = 1
    FINISHED = 2


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
        self.num_blocks, self.block_size = num_blocks, block_size
        self.max_num_seqs, self.max_num_batched_tokens = max_num_seqs, max_num_batched_tokens
        self.sample_fn, self.eos = sample_fn, eos
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.finished: list[Sequence] = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._scheduled: list[tuple[Sequence, int]] = []

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def _grow(self, seq: Sequence, n: int) -> bool:
        need = -(-(seq.num_computed + n) // self.block_size) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need > self.num_blocks:
            return False
        self.blocks_used += need
        seq.num_blocks += need
        return True

    def _preempt(self) -> Sequence:
        victim = self.running.pop()
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = victim.num_computed = 0
        victim.output = []  # BUG: preemption frees the KV cache, not the tokens already generated
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim

    def schedule(self) -> dict[str, int]:
        budget = self.max_num_batched_tokens
        self._scheduled = []
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            while not self._grow(seq, n):
                if self._preempt() is seq:
                    break
            else:
                self._scheduled.append((seq, n))
                budget -= n
                i += 1
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self._grow(seq, n):
                break
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            self._scheduled.append((seq, n))
            budget -= n
        return {seq.seq_id: n for seq, n in self._scheduled}

    def update(self) -> list[Sequence]:
        done = []
        for seq, n in self._scheduled:
            seq.num_computed += n
            if seq.num_computed < seq.num_tokens:
                continue
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if tok == self.eos or len(seq.output) >= seq.max_tokens:
                seq.status = SequenceStatus.FINISHED
                self.running.remove(seq)
                self.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
                self.finished.append(seq)
                done.append(seq)
        self._scheduled = []
        return done
