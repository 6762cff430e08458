"""P07 scheduler: the waiting queue is a binary heap.

Heap entries are (key, serial, seq). The key gives the order: arrivals take keys that grow at the
tail, preempted sequences keys that shrink below every other, per scheduler. The serial comes from
one process-wide counter and only keeps heapq from ever comparing two Sequence objects; keys are
unique within a scheduler, so the serial never decides anything, whatever other schedulers did.
"""

from __future__ import annotations

import enum
import heapq
import itertools
from collections import deque
from collections.abc import Callable

_SERIAL = itertools.count()  # process-wide; tie-breaker only, never reset


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
    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,
                 max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int],
                 eos: int | None = None) -> None:
        self.capacity = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self._heap: list[tuple[int, int, Sequence]] = []
        self._tail = 0  # next arrival key
        self._head = -1  # next preempted key
        self.running: list[Sequence] = []
        self.finished: list[Sequence] = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._plan: list[tuple[Sequence, int]] = []

    @property
    def waiting(self) -> deque[Sequence]:
        return deque(seq for _, _, seq in sorted(self._heap))

    def add(self, seq: Sequence) -> None:
        heapq.heappush(self._heap, (self._tail, next(_SERIAL), seq))
        self._tail += 1

    def _grow(self, seq: Sequence, tokens: int) -> bool:
        need = -(-tokens // self.block_size) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need > self.capacity:
            return False
        self.blocks_used += need
        seq.num_blocks += need
        return True

    def _preempt_last(self) -> Sequence:
        victim = self.running.pop()
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        heapq.heappush(self._heap, (self._head, next(_SERIAL), victim))
        self._head -= 1
        self.num_preemptions += 1
        return victim

    def schedule(self) -> dict[str, int]:
        budget = self.max_num_batched_tokens
        plan: list[tuple[Sequence, int]] = []
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if self._grow(seq, seq.num_computed + n):
                plan.append((seq, n))
                budget -= n
                i += 1
            elif self._preempt_last() is seq:
                pass  # it was the victim itself: running is shorter, i stays
        while self._heap and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self._heap[0][2]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self._grow(seq, seq.num_computed + n):
                break
            heapq.heappop(self._heap)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            plan.append((seq, n))
            budget -= n
        self._plan = plan
        return {seq.seq_id: n for seq, n in plan}

    def update(self) -> list[Sequence]:
        done: list[Sequence] = []
        for seq, n in self._plan:
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
        self._plan = []
        return done
