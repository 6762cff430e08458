"""A plain, readable canonical-API scheduler (docs/api.md): lists, a deque and ints, nothing else.

The catalog's mutants are no longer built from this file (conformance/mutants/build.py builds
them from the spec). It stays as the correct submission that tests/grading/ appends hostile
code to, because it uses no dataclass and no builtin that such code patches (getattr,
isinstance, sorted); impl/scheduler.py could take its place there. It has no validation:
submissions are not required to validate.
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
        self._batch: dict[str, int] = {}  # the last schedule(), read by update()
        self._by_id: dict[str, Sequence] = {}

    def add(self, seq: Sequence) -> None:
        self._by_id[seq.seq_id] = seq
        self.waiting.append(seq)

    # --- blocks and preemption ----------------------------------------------------------

    def blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.block_size)

    def try_grow(self, seq: Sequence, n: int) -> bool:
        need = self.blocks_for(seq.num_computed + n) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need > self.num_blocks:
            return False
        self.blocks_used += need
        seq.num_blocks += need
        return True

    def preempt_last(self) -> Sequence:
        victim = self.running.pop()
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim

    # --- schedule() -----------------------------------------------------------------------

    def schedule(self) -> dict[str, int]:
        batch: dict[str, int] = {}
        budget = self.max_num_batched_tokens
        budget = self.schedule_running(batch, budget)
        self.admit_waiting(batch, budget)
        self._batch = batch
        return dict(batch)

    def schedule_running(self, batch: dict[str, int], budget: int) -> int:
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            skipped = False
            while not self.try_grow(seq, n):
                if self.preempt_last() is seq:
                    skipped = True
                    break
            if not skipped:
                batch[seq.seq_id] = n
                budget -= n
                i += 1
        return budget

    def admit_waiting(self, batch: dict[str, int], budget: int) -> int:
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self.try_grow(seq, n):
                break
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            batch[seq.seq_id] = n
            budget -= n
        return budget

    # --- update() -------------------------------------------------------------------------

    def update(self) -> list[Sequence]:
        done: list[Sequence] = []
        for seq_id, n in self._batch.items():
            seq = self._by_id[seq_id]
            if self.advance(seq, n):
                done.append(seq)
        self._batch = {}
        return done

    def advance(self, seq: Sequence, n: int) -> bool:
        seq.num_computed += n
        if seq.num_computed < seq.num_tokens:
            return False
        tok = self.sample_fn(seq)
        seq.output.append(tok)
        if tok == self.eos or len(seq.output) >= seq.max_tokens:
            self.finish(seq)
            return True
        return False

    def finish(self, seq: Sequence) -> None:
        seq.status = SequenceStatus.FINISHED
        self.running.remove(seq)
        self.blocks_used -= seq.num_blocks
        seq.num_blocks = 0
        self.finished.append(seq)
