# ruff: noqa
"""Style: heap-ordered waiting queue with arrival counters.

Waiting sequences live in a binary heap keyed by a counter: arrivals take keys
that grow at the tail, preempted sequences take keys that shrink at the head,
so the heap minimum is always the FCFS head. `waiting` is rebuilt as a deque
from the heap on every read.
"""

from __future__ import annotations

import enum
import heapq
from collections import deque
from collections.abc import Callable


class SequenceStatus(enum.Enum):
    """Where a sequence is: one of the three queues."""

    WAITING = enum.auto()
    RUNNING = enum.auto()
    FINISHED = enum.auto()


class Sequence:
    """One request: prompt, generated output and its KV bookkeeping."""

    def __init__(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.seq_id = seq_id
        self.prompt_len = prompt_len
        self.max_tokens = max_tokens
        self.output: list[int] = []            # generated tokens, in order
        self.num_computed = 0                  # tokens whose KV is computed
        self.num_blocks = 0                    # KV blocks held
        self.status = SequenceStatus.WAITING

    @property
    def num_tokens(self) -> int:
        return self.prompt_len + len(self.output)


class Scheduler:
    """Continuous batching with chunked prefill and recompute preemption."""

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,
                 max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int],
                 eos: int | None = None) -> None:
        self.num_blocks_total = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self._heap: list[tuple[int, str, Sequence]] = []   # (key, seq_id, seq); smallest key = head
        self._next_tail = 0                            # key for the next arrival
        self._next_head = -1                           # key for the next preempted sequence
        self.running: list[Sequence] = []
        self.finished: list[Sequence] = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._last: list[tuple[Sequence, int]] = []

    @property
    def waiting(self) -> deque[Sequence]:
        return deque(item[2] for item in sorted(self._heap, key=lambda item: item[:2]))

    def add(self, seq: Sequence) -> None:
        # the arrival key is the position it joins at: behind everyone waiting
        heapq.heappush(self._heap, (len(self._heap), seq.seq_id, seq))

    def _push_head(self, seq: Sequence) -> None:
        heapq.heappush(self._heap, (self._next_head, seq.seq_id, seq))
        self._next_head -= 1

    def _blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.block_size)

    def _try_grow(self, seq: Sequence, tokens: int) -> bool:
        need = self._blocks_for(tokens) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need > self.num_blocks_total:
            return False
        self.blocks_used += need
        seq.num_blocks += need
        return True

    def _preempt(self, seq: Sequence) -> None:
        self.running.remove(seq)
        self.blocks_used -= seq.num_blocks
        seq.num_blocks = 0
        seq.num_computed = 0
        seq.status = SequenceStatus.WAITING
        self._push_head(seq)
        self.num_preemptions += 1

    def schedule(self) -> dict[str, int]:
        budget = self.max_num_batched_tokens
        batch: list[tuple[Sequence, int]] = []
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            skipped = False
            while not self._try_grow(seq, seq.num_computed + n):
                victim = self.running[-1]
                self._preempt(victim)
                if victim is seq:
                    skipped = True
                    break
            if skipped:
                continue
            batch.append((seq, n))
            budget -= n
            i += 1
        while self._heap and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self._heap[0][2]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self._try_grow(seq, seq.num_computed + n):
                break
            heapq.heappop(self._heap)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            batch.append((seq, n))
            budget -= n
        self._last = batch
        return {seq.seq_id: n for seq, n in batch}

    def update(self) -> list[Sequence]:
        done: list[Sequence] = []
        for seq, n in self._last:
            seq.num_computed += n
            if seq.num_computed != seq.num_tokens:
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
        self._last = []
        return done
