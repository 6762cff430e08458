# ruff: noqa
"""Style: parallel column arrays for the running set.

Running sequences are stored column-wise: one list per field (`_seqs`,
`_computed`, `_blocks`), all indexed by the running position. Admission appends
a row to every column, preemption and finishing delete a row from every
column. The columns are written back to the `Sequence` objects whenever a
sequence leaves the running set and at the end of every call.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable


class SequenceStatus(enum.Enum):
    """Where a sequence is: one of the three queues."""

    WAITING = 1
    RUNNING = 2
    FINISHED = 3


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
    """Running set as columns; waiting and finished as plain queues."""

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,
                 max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int],
                 eos: int | None = None) -> None:
        self.total_blocks = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self.waiting: deque[Sequence] = deque()
        self.finished: list[Sequence] = []
        self.num_preemptions = 0
        self._seqs: list[Sequence] = []     # column: the sequence in running position r
        self._computed: list[int] = []      # column: its num_computed
        self._blocks: list[int] = []        # column: its num_blocks
        self._batch_rows: list[tuple[Sequence, int]] = []

    @property
    def running(self) -> list[Sequence]:
        return list(self._seqs)

    @property
    def blocks_used(self) -> int:
        return sum(self._blocks)

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def _write_back(self) -> None:
        for row, seq in enumerate(self._seqs):
            seq.num_computed = self._computed[row]
            seq.num_blocks = self._blocks[row]

    def _drop_row(self, row: int) -> Sequence:
        seq = self._seqs.pop(row)
        seq.num_computed = self._computed.pop(row)
        seq.num_blocks = self._blocks.pop(row)
        return seq

    def _need(self, row: int, tokens: int) -> int:
        return -(-tokens // self.block_size) - self._blocks[row]

    def schedule(self) -> dict[str, int]:
        budget = self.max_num_batched_tokens
        rows: list[tuple[Sequence, int]] = []
        r = 0
        while r < len(self._seqs) and budget > 0:
            seq = self._seqs[r]
            n = min(seq.num_tokens - self._computed[r], budget)
            need = self._need(r, self._computed[r] + n)
            skipped = False
            while need > 0 and self.blocks_used + need > self.total_blocks:
                last = len(self._seqs) - 1
                victim = self._drop_row(last)
                victim.num_computed = 0
                victim.num_blocks = 0
                victim.status = SequenceStatus.WAITING
                self.waiting.appendleft(victim)
                self.num_preemptions += 1
                if last == r:
                    skipped = True
                    break
                need = self._need(r, self._computed[r] + n)
            if skipped:
                continue
            if need > 0:
                self._blocks[r] += need
            rows.append((seq, n))
            budget -= n
            r += 1
        while self.waiting and budget > 0 and len(self._seqs) < self.max_num_seqs:
            head = self.waiting[0]
            n = min(head.num_tokens - head.num_computed, budget)
            want = max(-(-(head.num_computed + n) // self.block_size), head.num_blocks)
            if self.blocks_used + want - head.num_blocks > self.total_blocks:
                break
            self.waiting.popleft()
            head.status = SequenceStatus.RUNNING
            self._seqs.append(head)
            self._computed.append(head.num_computed)
            self._blocks.append(want)
            rows.append((head, n))
            budget -= n
        self._batch_rows = rows
        self._write_back()
        return {seq.seq_id: n for seq, n in rows}

    def update(self) -> list[Sequence]:
        out: list[Sequence] = []
        for seq, n in self._batch_rows:
            r = self._seqs.index(seq)
            self._computed[r] += n
            if self._computed[r] < seq.num_tokens:
                continue
            seq.num_computed = self._computed[r]
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if (self.eos and tok == self.eos) or len(seq.output) >= seq.max_tokens:
                self._drop_row(r)
                seq.num_blocks = 0
                seq.status = SequenceStatus.FINISHED
                self.finished.append(seq)
                out.append(seq)
        self._batch_rows = []
        self._write_back()
        return out
