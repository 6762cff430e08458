# ruff: noqa
"""Style: an append-only event log replayed into the queues.

Every decision is first written as an event tuple (`("grow", id, k)`,
`("preempt", id)`, `("admit", id, n)`, `("run", id, n)`, `("finish", id)`), and
a single `_apply` function turns each event into its effect on the queues and
counters. The scheduler never edits a queue outside `_apply`.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable


class SequenceStatus(enum.Enum):
    """Where a sequence is: one of the three queues."""

    WAITING = "WAITING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


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


Event = tuple[str, str, int]   # (kind, seq_id, amount)


class Scheduler:
    """Decide by events, change state only by applying them."""

    _by_id: dict[str, Sequence] = {}        # seq_id -> sequence, for replaying events

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,
                 max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int],
                 eos: int | None = None) -> None:
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
        self.log: list[Event] = []          # every event since the start, in order
        self._scheduled: dict[str, int] = {}

    def _apply(self, event: Event) -> None:
        kind, seq_id, amount = event
        seq = self._by_id[seq_id]
        self.log.append(event)
        if kind == "add":
            self.waiting.append(seq)
        elif kind == "grow":
            seq.num_blocks += amount
            self.blocks_used += amount
        elif kind == "preempt":
            self.running.remove(seq)
            self.blocks_used -= seq.num_blocks
            seq.num_blocks = 0
            seq.num_computed = 0
            seq.status = SequenceStatus.WAITING
            self.waiting.appendleft(seq)
            self.num_preemptions += 1
        elif kind == "admit":
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            self._scheduled[seq_id] = amount
        elif kind == "run":
            self._scheduled[seq_id] = amount
        elif kind == "compute":
            seq.num_computed += amount
        elif kind == "finish":
            seq.status = SequenceStatus.FINISHED
            self.running.remove(seq)
            self.blocks_used -= seq.num_blocks
            seq.num_blocks = 0
            self.finished.append(seq)
        else:
            raise ValueError(f"unknown event kind {kind!r} for {seq_id!r}; expected one of the kinds in _apply")

    def add(self, seq: Sequence) -> None:
        self._by_id[seq.seq_id] = seq
        self._apply(("add", seq.seq_id, 0))

    def _grow_event(self, seq: Sequence, tokens: int) -> Event | None:
        """Return the event that makes room for `tokens`, ("grow", id, 0) if none is needed, None if no room."""
        need = (tokens - 1) // self.block_size + 1 - seq.num_blocks
        if need <= 0:
            return ("grow", seq.seq_id, 0)
        if self.blocks_used + need > self.num_blocks:
            return None
        return ("grow", seq.seq_id, need)

    def schedule(self) -> dict[str, int]:
        self._scheduled = {}
        budget = self.max_num_batched_tokens
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            grow = self._grow_event(seq, seq.num_computed + n)
            while grow is None:
                victim = self.running[-1]
                self._apply(("preempt", victim.seq_id, 0))
                if victim is seq:
                    break
                grow = self._grow_event(seq, seq.num_computed + n)
            if grow is None:
                continue
            self._apply(grow)
            self._apply(("run", seq.seq_id, n))
            budget -= n
            i += 1
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            head = self.waiting[0]
            n = min(head.num_tokens - head.num_computed, budget)
            grow = self._grow_event(head, head.num_computed + n)
            if grow is None:
                break
            self._apply(grow)
            self._apply(("admit", head.seq_id, n))
            budget -= n
        return dict(self._scheduled)

    def update(self) -> list[Sequence]:
        done: list[Sequence] = []
        for seq_id, n in list(self._scheduled.items()):
            seq = self._by_id[seq_id]
            self._apply(("compute", seq_id, n))
            if seq.num_computed == seq.num_tokens:
                tok = self.sample_fn(seq)
                seq.output.append(tok)
                if tok == self.eos or len(seq.output) >= seq.max_tokens:
                    self._apply(("finish", seq_id, 0))
                    done.append(seq)
        self._scheduled = {}
        return done
