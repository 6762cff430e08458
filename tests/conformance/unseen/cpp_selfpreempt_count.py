# ruff: noqa
"""Style: one class per phase, sharing a block pool and a step plan.

`BlockPool` owns the KV accounting, `RunningPhase` (phase 1), `WaitingPhase`
(phase 2) and `Completion` (update) are small objects that each do one part of
the card's rules on a shared `StepPlan`. The `Scheduler` wires them together
and exposes the queues they share.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


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

    @property
    def remaining(self) -> int:
        return self.num_tokens - self.num_computed


class BlockPool:
    """KV blocks: a capacity, a size and the count in use."""

    def __init__(self, capacity: int, size: int) -> None:
        self.capacity = capacity
        self.size = size
        self.used = 0

    def try_grow(self, seq: Sequence, tokens: int) -> bool:
        need = -(-tokens // self.size) - seq.num_blocks
        if need <= 0:
            return True
        if self.used + need > self.capacity:
            return False
        self.used += need
        seq.num_blocks += need
        return True

    def release(self, seq: Sequence) -> None:
        self.used -= seq.num_blocks
        seq.num_blocks = 0


@dataclass
class StepPlan:
    """What one schedule() decided: sequences and token counts, in order."""

    budget: int
    entries: list[tuple[Sequence, int]] = field(default_factory=list)

    def take(self, seq: Sequence, n: int) -> None:
        self.entries.append((seq, n))
        self.budget -= n


class RunningPhase:
    """Phase 1: give each running sequence its tokens, preempting from the back."""

    def __init__(self, owner: Scheduler) -> None:
        self.owner = owner

    def preempt(self, victim: Sequence) -> None:
        o = self.owner
        o.running.remove(victim)
        o.pool.release(victim)
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        o.waiting.appendleft(victim)

    def run(self, plan: StepPlan) -> None:
        running = self.owner.running
        i = 0
        while i < len(running) and plan.budget > 0:
            seq = running[i]
            n = min(seq.remaining, plan.budget)
            while not self.owner.pool.try_grow(seq, seq.num_computed + n):
                victim = running[-1]
                self.preempt(victim)
                if victim is seq:
                    # it gave up its own slot: a skip, not a preemption of another sequence
                    break
                self.owner.num_preemptions += 1
            else:
                plan.take(seq, n)
                i += 1


class WaitingPhase:
    """Phase 2: admit the waiting head while it fits; never look past it."""

    def __init__(self, owner: Scheduler) -> None:
        self.owner = owner

    def run(self, plan: StepPlan) -> None:
        o = self.owner
        while o.waiting and plan.budget > 0 and len(o.running) < o.max_num_seqs:
            head = o.waiting[0]
            n = min(head.remaining, plan.budget)
            if not o.pool.try_grow(head, head.num_computed + n):
                return
            o.waiting.popleft()
            head.status = SequenceStatus.RUNNING
            o.running.append(head)
            plan.take(head, n)


class Completion:
    """update(): advance, sample at equality, finish on eos or max_tokens."""

    def __init__(self, owner: Scheduler) -> None:
        self.owner = owner

    def finish(self, seq: Sequence) -> None:
        o = self.owner
        seq.status = SequenceStatus.FINISHED
        o.running.remove(seq)
        o.pool.release(seq)
        o.finished.append(seq)

    def run(self, plan: StepPlan) -> list[Sequence]:
        o = self.owner
        ended = []
        for seq, n in plan.entries:
            seq.num_computed += n
            if seq.remaining > 0:
                continue
            token = o.sample_fn(seq)
            seq.output.append(token)
            if token == o.eos or len(seq.output) >= seq.max_tokens:
                self.finish(seq)
                ended.append(seq)
        return ended


class Scheduler:
    """Wires the three phases to the shared queues and pool."""

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,
                 max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int],
                 eos: int | None = None) -> None:
        self.pool = BlockPool(num_blocks, block_size)
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.finished: list[Sequence] = []
        self.num_preemptions = 0
        self.phase1 = RunningPhase(self)
        self.phase2 = WaitingPhase(self)
        self.completion = Completion(self)
        self.plan = StepPlan(0)

    @property
    def blocks_used(self) -> int:
        return self.pool.used

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def schedule(self) -> dict[str, int]:
        plan = StepPlan(self.max_num_batched_tokens)
        self.phase1.run(plan)
        self.phase2.run(plan)
        self.plan = plan
        return {seq.seq_id: n for seq, n in plan.entries}

    def update(self) -> list[Sequence]:
        ended = self.completion.run(self.plan)
        self.plan = StepPlan(0)
        return ended
