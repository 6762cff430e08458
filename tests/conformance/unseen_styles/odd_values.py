"""A correct P07 scheduler whose values are of other types than docs/api.md's, each one the interface allows: a
tuple for waiting, a class of its own (__iter__ and __len__) for running, a property building a fresh generator
for finished, a str-mixin enum with plain-string statuses, schedule()'s dict a dict subclass holding int-subclass
counts, update() a tuple, output a list subclass. Every one is a note, never a finding.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from itertools import islice


class SchedulerError(Exception):
    """Base of every error the scheduler raises on bad input or bad call order."""


class InvalidConfig(SchedulerError):
    """A constructor argument is out of range or of the wrong type."""


class InvalidRequest(SchedulerError):
    """A sequence passed to add() is malformed, duplicated or can never fit."""


class ProtocolError(SchedulerError):
    """schedule() and update() were called out of order."""


class SequenceStatus(str, enum.Enum):  # noqa: UP042 - a str mixin, as a student writes it
    """Where a sequence is: its queue, named as in the card."""

    WAITING = "WAITING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


_WAITING = "WAITING"  # statuses kept as plain strings equal to the str-enum members
_RUNNING = "RUNNING"
_FINISHED = "FINISHED"


class _Out(list):
    """An output list subclass."""


class _Count(int):
    """A count that is an int subclass."""


class _Batch(dict):
    """schedule()'s result as a dict subclass."""


class _Box:
    """A container of my own: __iter__ and __len__ only."""

    def __init__(self, items):
        self._items = list(items)

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)
_NO_EOS = object()  # compares unequal to every token: eos=None never finishes a sequence


class Sequence:
    """One request and its progress; num_tokens is derived, never stored."""

    __slots__ = ("seq_id", "prompt_len", "max_tokens", "output", "num_computed", "num_blocks", "status")

    def __init__(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.seq_id = seq_id
        self.prompt_len = prompt_len  # tokens in the prompt
        self.max_tokens = max_tokens  # the sequence finishes when len(output) reaches this
        self.output: list[int] = _Out()  # sampled tokens, in order; kept across preemption
        self.num_computed = 0  # tokens whose KV is computed
        self.num_blocks = 0  # KV blocks held; 0 unless running
        self.status = _WAITING

    @property
    def num_tokens(self) -> int:
        """prompt_len + len(output): the tokens the sequence holds once all are computed."""
        return self.prompt_len + len(self.output)

    def __repr__(self) -> str:
        return (f"Sequence({self.seq_id!r}, prompt_len={self.prompt_len}, max_tokens={self.max_tokens}, "
                f"output={self.output}, num_computed={self.num_computed}, num_blocks={self.num_blocks}, "
                f"status={self.status})")


def _require_int(name: str, value: object, minimum: int | None) -> None:
    if type(value) is not int:
        raise InvalidConfig(f"{name} must be an int, got {value!r} ({type(value).__name__}); pass a whole number")
    if minimum is not None and value < minimum:
        raise InvalidConfig(f"{name} must be >= {minimum}, got {value}; every budget and size is at least 1")


class Scheduler:
    """Continuous batching with chunked prefill and recompute preemption under three budgets."""

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int, max_num_batched_tokens: int,
                 sample_fn: Callable[[Sequence], int], eos: int | None = None) -> None:
        for name, value in (("num_blocks", num_blocks), ("block_size", block_size), ("max_num_seqs", max_num_seqs),
                            ("max_num_batched_tokens", max_num_batched_tokens)):
            _require_int(name, value, 1)
        if eos is not None:
            _require_int("eos", eos, None)
        if not callable(sample_fn):
            raise InvalidConfig(f"sample_fn must be callable, got {sample_fn!r}; pass a function that takes a "
                                "Sequence and returns a token")
        self.num_blocks = num_blocks  # KV blocks in the whole cache
        self.block_size = block_size  # tokens per KV block
        self.max_num_seqs = max_num_seqs  # limit on len(running), checked at admission
        self.max_num_batched_tokens = max_num_batched_tokens  # token budget of one schedule() call
        self.sample_fn = sample_fn
        self.eos = eos
        self._w: deque[Sequence] = deque()  # head first
        self._r: list[Sequence] = []  # admission order; running[-1] is the next victim
        self._f: list[Sequence] = []  # finishing order
        self.blocks_used = 0  # == sum(s.num_blocks for s in running), kept incrementally
        self.num_preemptions = 0  # preemptions so far
        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues
        # == the spec's pending batch: its keys are running[:len(batch)] (phase 1 schedules a prefix of
        # running and phase 2 appends), and only update() changes running after schedule()
        self._batch: dict[str, int] | None = None

    @property
    def waiting(self):
        return tuple(self._w)

    @property
    def running(self):
        return _Box(self._r)

    @property
    def finished(self):
        return (s for s in self._f)  # a fresh generator on every read

    def add(self, seq: Sequence) -> None:
        """Append a new sequence to the tail of waiting, rejecting one that can never fit."""
        if not isinstance(seq, Sequence):
            raise InvalidRequest(f"add() takes a Sequence, got {seq!r} ({type(seq).__name__}); "
                                 "build one with Sequence(seq_id, prompt_len, max_tokens)")
        seq_id, prompt_len, max_tokens = seq.seq_id, seq.prompt_len, seq.max_tokens
        if type(seq_id) is not str:
            raise InvalidRequest(f"seq_id must be a str, got {seq_id!r} ({type(seq_id).__name__}); "
                                 "name requests by string")
        for name, value in (("prompt_len", prompt_len), ("max_tokens", max_tokens)):
            if type(value) is not int or value < 1:
                raise InvalidRequest(f"request {seq_id!r}: {name} must be an int >= 1, got {value!r}; "
                                     "every request has a prompt and may generate at least one token")
        if seq_id in self._seq_ids:
            raise InvalidRequest(f"request {seq_id!r} was already added; seq ids must be unique")
        if seq.output or seq.num_computed or seq.num_blocks or seq.status is not _WAITING:
            raise InvalidRequest(f"request {seq_id!r} is not new: {seq!r}; add a fresh Sequence")
        peak = prompt_len + max_tokens - 1
        need = -(-peak // self.block_size)
        if need > self.num_blocks:
            raise InvalidRequest(
                f"request {seq_id!r} can never be scheduled: it may hold {peak} tokens (prompt_len {prompt_len} + "
                f"max_tokens {max_tokens} - 1), which needs {need} blocks of size {self.block_size}, but "
                f"num_blocks is {self.num_blocks}; raise num_blocks to at least {need} or shorten the request")
        self._seq_ids.add(seq_id)
        self._w.append(seq)

    def schedule(self) -> dict[str, int]:
        """Run phase 1 (running, preempting running[-1]) then phase 2 (admit waiting, FCFS).

        Both phases in one frame, with the counters in locals: this is the hot path (docs/bench.md)."""
        if self._batch is not None:
            pending = dict(zip((s.seq_id for s in self._r), self._batch.values(), strict=False))
            raise ProtocolError("schedule() called twice without update(); call update() to apply the "
                                f"pending batch {pending} first")
        running = self._r
        budget = self.max_num_batched_tokens
        size = self.block_size
        total = self.num_blocks
        used = self.blocks_used
        batch: dict[str, int] = {}
        # the spec's index loop: preemption pops running[-1], so the iterator ends where i would
        for seq in running:
            computed = seq.num_computed
            tokens = seq.prompt_len + len(seq.output)  # == num_tokens == num_computed + n
            n = tokens - computed
            if n >= budget:
                # the budget runs out on seq: the last sequence phase 1 can schedule
                used = self._grow(seq, computed + budget, used)
                if used < 0:
                    used = self.blocks_used
                else:
                    batch[seq.seq_id] = budget
                    budget = 0
                break
            # the spec's try_grow, skipped while the held blocks already cover num_computed + n tokens
            if tokens > seq.num_blocks * size:
                need = -(-tokens // size) - seq.num_blocks
                if used + need <= total:
                    used += need
                    seq.num_blocks += need
                else:
                    used = self._grow(seq, tokens, used)
                    if used < 0:
                        used = self.blocks_used
                        break
            batch[seq.seq_id] = n
            budget -= n
        if budget:
            waiting = self._w
            limit = self.max_num_seqs
            while waiting and len(running) < limit:
                head = waiting[0]
                computed = head.num_computed
                n = head.prompt_len + len(head.output) - computed
                if n > budget:
                    n = budget
                held = head.num_blocks
                need = -(-(computed + n) // size) - held
                if need > 0:
                    if used + need > total:
                        break
                    used += need
                    head.num_blocks = held + need
                waiting.popleft()
                head.status = _RUNNING
                running.append(head)
                batch[head.seq_id] = n
                budget -= n
                if not budget:
                    break
        self.blocks_used = used
        self._batch = batch
        return _Batch((k, _Count(v)) for k, v in batch.items())

    def _grow(self, seq: Sequence, tokens: int, used: int) -> int:
        """Give a running seq blocks for `tokens` tokens, preempting running[-1] until they fit (P1.preempt).

        `used` is the caller's blocks_used; returns blocks_used after growing, or -1 when seq
        was preempted itself (P1.skip_self), with self.blocks_used already set.
        """
        need = -(-tokens // self.block_size) - seq.num_blocks
        if need <= 0:
            return used
        running = self._r
        total = self.num_blocks
        while used + need > total:
            victim = running.pop()
            used -= victim.num_blocks
            victim.num_blocks = 0
            victim.num_computed = 0
            victim.status = _WAITING
            self._w.appendleft(victim)
            self.num_preemptions += 1
            if victim is seq:
                self.blocks_used = used
                return -1
        seq.num_blocks += need
        return used + need

    def update(self) -> list[Sequence]:
        """Apply the last batch in order: compute, sample at catch-up, finish on eos or max_tokens."""
        batch = self._batch
        if batch is None:
            raise ProtocolError("update() called without a preceding schedule(); call schedule() first")
        self._batch = None
        running = self._r
        finished = self._f
        sample = self.sample_fn
        eos = _NO_EOS if self.eos is None else self.eos
        done: list[Sequence] = []
        freed = 0
        try:
            for seq, n in zip(running, batch.values(), strict=False):
                computed = seq.num_computed + n
                seq.num_computed = computed
                output = seq.output
                if computed == seq.prompt_len + len(output):
                    token = sample(seq)
                    output.append(token)
                    if token == eos or len(output) >= seq.max_tokens:
                        seq.status = _FINISHED
                        freed += seq.num_blocks
                        seq.num_blocks = 0
                        finished.append(seq)
                        done.append(seq)
        finally:
            if done:
                # one pass over the scheduled prefix instead of a list.remove per finished sequence
                k = len(batch)
                running[:k] = [s for s in islice(running, k) if s.status is _RUNNING]
                self.blocks_used -= freed
        return tuple(done)
