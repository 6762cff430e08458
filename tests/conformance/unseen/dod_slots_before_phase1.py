# ruff: noqa
"""Style: one dict of deques, keyed by status, holds every queue.

The scheduler keeps `self._queues[status]` for the three statuses; moving a
sequence between queues is a pop from one deque and a push onto another, so a
status change and a queue change happen in the same helper. `running` and
`finished` are exposed as lists built from their deques.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable


class SequenceStatus(enum.Enum):
    """Where a sequence is: one of the three queues."""

    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


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
    """Three queues in one dict; the block pool as two counters."""

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,
                 max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int],
                 eos: int | None = None) -> None:
        self.config = {
            "num_blocks": num_blocks,
            "block_size": block_size,
            "max_num_seqs": max_num_seqs,
            "max_num_batched_tokens": max_num_batched_tokens,
        }
        self.sample_fn = sample_fn
        self.eos = eos
        self._queues: dict[SequenceStatus, deque[Sequence]] = {
            status: deque() for status in SequenceStatus
        }
        self.blocks_used = 0
        self.num_preemptions = 0
        self._pending: dict[str, tuple[Sequence, int]] = {}

    @property
    def waiting(self) -> deque[Sequence]:
        return self._queues[SequenceStatus.WAITING]

    @property
    def running(self) -> list[Sequence]:
        return list(self._queues[SequenceStatus.RUNNING])

    @property
    def finished(self) -> list[Sequence]:
        return list(self._queues[SequenceStatus.FINISHED])

    def add(self, seq: Sequence) -> None:
        self._queues[SequenceStatus.WAITING].append(seq)

    def _move(self, seq: Sequence, to: SequenceStatus, head: bool = False) -> None:
        self._queues[seq.status].remove(seq)
        seq.status = to
        if head:
            self._queues[to].appendleft(seq)
        else:
            self._queues[to].append(seq)

    def _release(self, seq: Sequence) -> None:
        self.blocks_used -= seq.num_blocks
        seq.num_blocks = 0

    def _fits(self, seq: Sequence, tokens: int) -> bool:
        """Take the blocks `tokens` need, or change nothing and say no."""
        size = self.config["block_size"]
        want = (tokens + size - 1) // size
        extra = want - seq.num_blocks
        if extra <= 0:
            return True
        if self.blocks_used + extra <= self.config["num_blocks"]:
            seq.num_blocks = want
            self.blocks_used += extra
            return True
        return False

    def schedule(self) -> dict[str, int]:
        budget = self.config["max_num_batched_tokens"]
        run_q = self._queues[SequenceStatus.RUNNING]
        wait_q = self._queues[SequenceStatus.WAITING]
        plan: dict[str, tuple[Sequence, int]] = {}
        free_slots = self.config["max_num_seqs"] - len(run_q)
        idx = 0
        while idx < len(run_q) and budget > 0:
            seq = run_q[idx]
            n = min(seq.num_tokens - seq.num_computed, budget)
            while not self._fits(seq, seq.num_computed + n):
                victim = run_q[-1]
                self._release(victim)
                victim.num_computed = 0
                self._move(victim, SequenceStatus.WAITING, head=True)
                self.num_preemptions += 1
                if victim is seq:
                    break
            else:
                plan[seq.seq_id] = (seq, n)
                budget -= n
                idx += 1
        while wait_q and budget > 0 and free_slots > 0:
            seq = wait_q[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self._fits(seq, seq.num_computed + n):
                break
            self._move(seq, SequenceStatus.RUNNING)
            plan[seq.seq_id] = (seq, n)
            budget -= n
            free_slots -= 1
        self._pending = plan
        return {key: n for key, (_, n) in plan.items()}

    def update(self) -> list[Sequence]:
        ended: list[Sequence] = []
        for seq, n in self._pending.values():
            seq.num_computed += n
            if seq.num_computed < seq.num_tokens:
                continue
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if tok == self.eos or len(seq.output) >= seq.max_tokens:
                self._release(seq)
                self._move(seq, SequenceStatus.FINISHED)
                ended.append(seq)
        self._pending = {}
        return ended
