# ruff: noqa
"""Style: preallocated slot table indexed by integers.

Every added sequence gets an integer slot. The counters the scheduler works on
(`num_computed`, `num_blocks`, the status code) live in flat integer arrays that
grow by doubling; the queues hold slot numbers only. The `Sequence` objects are
brought in line with the arrays at the end of every call, so a reader of the
public attributes sees the same values.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable


class SequenceStatus(enum.Enum):
    """Where a sequence is: one of the three queues."""

    WAITING = 0
    RUNNING = 1
    FINISHED = 2


_WAITING, _RUNNING, _FINISHED = 0, 1, 2
_BY_CODE = (SequenceStatus.WAITING, SequenceStatus.RUNNING, SequenceStatus.FINISHED)


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
    """Queues of slot numbers over flat per-slot arrays."""

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,
                 max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int],
                 eos: int | None = None) -> None:
        self._capacity_blocks = num_blocks
        self._block_size = block_size
        self._max_seqs = max_num_seqs
        self._max_tokens_per_step = max_num_batched_tokens
        self._sample = sample_fn
        self._eos = eos
        size = 8
        self._seq: list[Sequence | None] = [None] * size   # slot -> sequence
        self._computed = [0] * size                          # slot -> num_computed
        self._held = [0] * size                              # slot -> num_blocks
        self._code = [_WAITING] * size                       # slot -> status code
        self._used = 0                                       # slots handed out so far
        self._wait: deque[int] = deque()
        self._run: list[int] = []
        self._done: list[int] = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._step_slots: list[int] = []
        self._step_counts: list[int] = []

    @property
    def waiting(self) -> deque[Sequence]:
        return deque(self._at(slot) for slot in self._wait)

    @property
    def running(self) -> list[Sequence]:
        return [self._at(slot) for slot in self._run]

    @property
    def finished(self) -> list[Sequence]:
        return [self._at(slot) for slot in self._done]

    def _at(self, slot: int) -> Sequence:
        seq = self._seq[slot]
        assert seq is not None, f"slot {slot} is empty"
        return seq

    def _grow_table(self) -> None:
        extra = len(self._seq)
        self._seq.extend([None] * extra)
        self._computed.extend([0] * extra)
        self._held.extend([0] * extra)
        self._code.extend([_WAITING] * extra)

    def add(self, seq: Sequence) -> None:
        if self._used == len(self._seq):
            self._grow_table()
        slot = self._used
        self._used += 1
        self._seq[slot] = seq
        self._computed[slot] = seq.num_computed
        self._held[slot] = seq.num_blocks
        self._code[slot] = _WAITING
        self._wait.append(slot)

    def _tokens(self, slot: int) -> int:
        seq = self._at(slot)
        return seq.prompt_len + len(seq.output)

    def _sync(self) -> None:
        for slot in range(self._used):
            seq = self._at(slot)
            seq.num_computed = self._computed[slot]
            seq.num_blocks = self._held[slot]
            seq.status = _BY_CODE[self._code[slot]]

    def _try_grow(self, slot: int, tokens: int) -> bool:
        need = (tokens + self._block_size - 1) // self._block_size - self._held[slot]
        if need <= 0:
            return True
        if self.blocks_used + need > self._capacity_blocks:
            return False
        self._held[slot] += need
        self.blocks_used += need
        return True

    def _free(self, slot: int) -> None:
        self.blocks_used -= self._held[slot]
        self._held[slot] = 0

    def schedule(self) -> dict[str, int]:
        budget = self._max_tokens_per_step
        slots: list[int] = []
        counts: list[int] = []
        preempted_now = False
        i = 0
        while i < len(self._run) and budget > 0:
            slot = self._run[i]
            n = min(self._tokens(slot) - self._computed[slot], budget)
            skipped = False
            while not self._try_grow(slot, self._computed[slot] + n):
                victim = self._run.pop()
                self._free(victim)
                self._computed[victim] = 0
                self._code[victim] = _WAITING
                self._wait.appendleft(victim)
                self.num_preemptions += 1
                preempted_now = True
                if victim == slot:
                    skipped = True
                    break
            if not skipped:
                slots.append(slot)
                counts.append(n)
                budget -= n
                i += 1
        # as in vLLM: a step that had to preempt admits nobody
        while not preempted_now and self._wait and budget > 0 and len(self._run) < self._max_seqs:
            slot = self._wait[0]
            n = min(self._tokens(slot) - self._computed[slot], budget)
            if not self._try_grow(slot, self._computed[slot] + n):
                break
            self._wait.popleft()
            self._code[slot] = _RUNNING
            self._run.append(slot)
            slots.append(slot)
            counts.append(n)
            budget -= n
        self._step_slots, self._step_counts = slots, counts
        self._sync()
        return {self._at(slots[k]).seq_id: counts[k] for k in range(len(slots))}

    def update(self) -> list[Sequence]:
        ended: list[Sequence] = []
        for k in range(len(self._step_slots)):
            slot, n = self._step_slots[k], self._step_counts[k]
            self._computed[slot] += n
            seq = self._at(slot)
            if self._computed[slot] != self._tokens(slot):
                continue
            seq.num_computed = self._computed[slot]
            tok = self._sample(seq)
            seq.output.append(tok)
            if tok == self._eos or len(seq.output) >= seq.max_tokens:
                self._free(slot)
                self._code[slot] = _FINISHED
                self._run.remove(slot)
                self._done.append(slot)
                ended.append(seq)
        self._step_slots, self._step_counts = [], []
        self._sync()
        return ended
