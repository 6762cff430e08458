"""Missed mutant heap_queue.py:65:15:unwrap:
`deque((seq for _, seq in sorted(self._heap, key=lambda item: item[0])))` -> `(seq for _, seq in sorted(self._heap, key=lambda item: item[0]))`.

Why it is a bug: `waiting` becomes a one-shot generator: len(), indexing and a second read fail, yet the suite passes it; docs/api.md says `waiting: collections.deque`.
The suite passes it (profile quick); the original style file and docs/rules.md and docs/api.md disagree.
"""
# ruff: noqa
# mypy: ignore-errors
# The code below is the unparsed mutant, one change away from its style file.
# Smallest workload found that shows it: num_blocks=1 block_size=1 max_num_seqs=1 max_num_batched_tokens=1 eos=None; arrivals r<i>(prompt_len,max_tokens)@step: r0(1,1)@1
# First difference: event 0: original ('schedule', 1, (('r0', 1),), ((), ('r0',), (), 1, 0, (('r0', (), 0, 1, 'RUNNING', 1),), ('deque', 'list', 'list')), 'dict') vs mutant ('schedule', 1, (('r0', 1),), ((), ('r0',), (), 1, 0, (('r0', (), 0, 1, 'RUNNING', 1),), ('generator', 'list', 'list')), 'dict')
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
        self.output: list[int] = []
        self.num_computed = 0
        self.num_blocks = 0
        self.status = SequenceStatus.WAITING

    @property
    def num_tokens(self) -> int:
        return self.prompt_len + len(self.output)

class Scheduler:
    """Continuous batching with chunked prefill and recompute preemption."""

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int, max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int], eos: int | None=None) -> None:
        self.num_blocks_total = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self._heap: list[tuple[int, Sequence]] = []
        self._next_tail = 0
        self._next_head = -1
        self.running: list[Sequence] = []
        self.finished: list[Sequence] = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._last: list[tuple[Sequence, int]] = []

    @property
    def waiting(self) -> deque[Sequence]:
        return (seq for _, seq in sorted(self._heap, key=lambda item: item[0]))

    def add(self, seq: Sequence) -> None:
        heapq.heappush(self._heap, (self._next_tail, seq))
        self._next_tail += 1

    def _push_head(self, seq: Sequence) -> None:
        heapq.heappush(self._heap, (self._next_head, seq))
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
        while self._heap and budget > 0 and (len(self.running) < self.max_num_seqs):
            seq = self._heap[0][1]
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
