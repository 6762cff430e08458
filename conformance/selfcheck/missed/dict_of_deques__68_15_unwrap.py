"""Missed mutant dict_of_deques.py:68:15:unwrap:
`list(self._queues[SequenceStatus.RUNNING])` -> `self._queues[SequenceStatus.RUNNING]`.

Why it is a bug: docs/api.md fixes the container types; the suite reads the queue without checking that it is the type docs/api.md names.
The suite passes it (profile quick); the original style file and docs/rules.md and docs/api.md disagree.
"""
# ruff: noqa
# mypy: ignore-errors
# The code below is the unparsed mutant, one change away from its style file.
# Smallest workload found that shows it: num_blocks=1 block_size=1 max_num_seqs=1 max_num_batched_tokens=1 eos=None; arrivals r<i>(prompt_len,max_tokens)@step: r0(1,1)@1
# First difference: event 0: original ('schedule', 1, (('r0', 1),), ((), ('r0',), (), 1, 0, (('r0', (), 0, 1, 'RUNNING', 1),), ('deque', 'list', 'list')), 'dict') vs mutant ('schedule', 1, (('r0', 1),), ((), ('r0',), (), 1, 0, (('r0', (), 0, 1, 'RUNNING', 1),), ('deque', 'deque', 'list')), 'dict')
from __future__ import annotations
import enum
from collections import deque
from collections.abc import Callable

class SequenceStatus(enum.Enum):
    """Where a sequence is: one of the three queues."""
    WAITING = 'waiting'
    RUNNING = 'running'
    FINISHED = 'finished'

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

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int, max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int], eos: int | None=None) -> None:
        self.config = {'num_blocks': num_blocks, 'block_size': block_size, 'max_num_seqs': max_num_seqs, 'max_num_batched_tokens': max_num_batched_tokens}
        self.sample_fn = sample_fn
        self.eos = eos
        self._queues: dict[SequenceStatus, deque[Sequence]] = {status: deque() for status in SequenceStatus}
        self.blocks_used = 0
        self.num_preemptions = 0
        self._pending: dict[str, tuple[Sequence, int]] = {}

    @property
    def waiting(self) -> deque[Sequence]:
        return self._queues[SequenceStatus.WAITING]

    @property
    def running(self) -> list[Sequence]:
        return self._queues[SequenceStatus.RUNNING]

    @property
    def finished(self) -> list[Sequence]:
        return list(self._queues[SequenceStatus.FINISHED])

    def add(self, seq: Sequence) -> None:
        self._queues[SequenceStatus.WAITING].append(seq)

    def _move(self, seq: Sequence, to: SequenceStatus, head: bool=False) -> None:
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
        size = self.config['block_size']
        want = (tokens + size - 1) // size
        extra = want - seq.num_blocks
        if extra <= 0:
            return True
        if self.blocks_used + extra <= self.config['num_blocks']:
            seq.num_blocks = want
            self.blocks_used += extra
            return True
        return False

    def schedule(self) -> dict[str, int]:
        budget = self.config['max_num_batched_tokens']
        run_q = self._queues[SequenceStatus.RUNNING]
        wait_q = self._queues[SequenceStatus.WAITING]
        plan: dict[str, tuple[Sequence, int]] = {}
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
        while wait_q and budget > 0 and (len(run_q) < self.config['max_num_seqs']):
            seq = wait_q[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self._fits(seq, seq.num_computed + n):
                break
            self._move(seq, SequenceStatus.RUNNING)
            plan[seq.seq_id] = (seq, n)
            budget -= n
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
