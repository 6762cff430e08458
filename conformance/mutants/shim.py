"""docs/api.md's Sequence, SequenceStatus and Scheduler over the pure spec: the shell every mutant shares.

conformance/mutants/build.py appends this file (its ``spec`` imports stripped) to the text of
spec/errors.py, spec/model.py and spec/rules.py, with one fault's edits applied, to make one
self-contained submission. The Scheduler decides nothing: it keeps a spec State, lets the
rules change it, and mirrors it into the white-box attributes after every call.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from dataclasses import replace

from spec.model import Config, Event, Sample, Seq, State, Status
from spec.rules import add, initial_state, schedule, update


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


def apply_stale(state: State, seq_id: str, n: int, sample: Sample) -> tuple[State, Seq, tuple[Event, ...]]:
    """Apply n tokens to a scheduled sequence that is no longer running, as list-based code does.

    The rules never schedule such a sequence; a bug can (a victim preempted after it was
    scheduled in the same step). Code that keeps Sequence objects advances it by id wherever
    it is, samples it once caught up, and fails to remove it from running when it finishes.
    """
    seq = state.find(seq_id)
    assert seq is not None, f"{seq_id} was scheduled but is in no queue"
    seq = replace(seq, num_computed=seq.num_computed + n)
    if seq.num_computed >= seq.num_tokens:
        token = sample(seq_id, seq.output)
        seq = replace(seq, output=seq.output + (token,))
        if token == state.config.eos or len(seq.output) >= seq.max_tokens:
            raise ValueError("list.remove(x): x not in list")
    state = replace(state, waiting=tuple(seq if q.seq_id == seq_id else q for q in state.waiting))
    return state, seq, ()


STATUS = {Status.WAITING: SequenceStatus.WAITING, Status.RUNNING: SequenceStatus.RUNNING,
          Status.FINISHED: SequenceStatus.FINISHED}


class Scheduler:
    # the rules, bound here: code appended to this file may reuse their names (tests/grading/hostile/)
    _initial_state = staticmethod(initial_state)
    _add = staticmethod(add)
    _schedule = staticmethod(schedule)
    _update = staticmethod(update)

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int, max_num_batched_tokens: int,
                 sample_fn: Callable[[Sequence], int], eos: int | None = None) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self.waiting: deque[Sequence] = deque()  # mirrors of the spec State's queues, same order
        self.running: list[Sequence] = []
        self.finished: list[Sequence] = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._batch: dict[str, int] = {}  # the last schedule(), read by update()
        self._by_id: dict[str, Sequence] = {}
        self._state = self._initial_state(Config(num_blocks, block_size, max_num_seqs, max_num_batched_tokens, eos))

    def add(self, seq: Sequence) -> None:
        before = self._state
        self._state = after = self._add(before, seq.seq_id, seq.prompt_len, seq.max_tokens)
        self._by_id[seq.seq_id] = seq
        if after.running is before.running and after.waiting[:-1] == before.waiting and after.finished is \
                before.finished and after.waiting:  # the usual add: one more waiting at the tail, nothing else
            self._copy(after.waiting[-1])  # (mirroring every sequence would make a crowd of n adds cost n**2)
            self.waiting.append(seq)
            self.blocks_used, self.num_preemptions = after.blocks_used, after.num_preemptions
        else:
            self._mirror()

    def schedule(self) -> dict[str, int]:
        self._state, batch = self._schedule(replace(self._state, pending=None))
        self._batch = dict(batch)
        self._mirror()
        return dict(self._batch)

    def update(self) -> list[Sequence]:
        state = replace(self._state, pending=tuple(self._batch.items()))  # the batch is the one kept here
        self._state, done = self._update(state, self._sample)
        self._batch = {}
        self._mirror()
        return [self._by_id[q.seq_id] for q in done]

    def _sample(self, seq_id: str, output: tuple[int, ...]) -> int:
        seq = self._by_id[seq_id]
        seq.output[:] = output
        return self.sample_fn(seq)

    def _mirror(self) -> None:
        state = self._state
        new = state.finished[len(self.finished):]  # a finished sequence never changes again
        for q in state.waiting + state.running + new:
            self._copy(q)
        self.waiting.clear()
        self.waiting.extend(self._by_id[q.seq_id] for q in state.waiting)
        self.running[:] = [self._by_id[q.seq_id] for q in state.running]
        self.finished.extend(self._by_id[q.seq_id] for q in new)
        self.blocks_used = state.blocks_used
        self.num_preemptions = state.num_preemptions

    def _copy(self, q: Seq) -> None:
        seq = self._by_id[q.seq_id]
        seq.output[:] = q.output
        seq.num_computed = q.num_computed
        seq.num_blocks = q.num_blocks
        seq.status = STATUS[q.status]
