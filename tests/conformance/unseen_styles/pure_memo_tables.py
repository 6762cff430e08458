"""P07 scheduler in a table-driven style with legitimate module-level state.

* `blocks_for(tokens, block_size)` is a pure function memoised process-wide with lru_cache: its key
  is every input, so any scheduler may share the cache.
* The phases are module-level functions in an immutable tuple, each taking the scheduler.
* Status transitions are an immutable mapping (MappingProxyType).
* Live schedulers are tracked in a WeakSet for debugging only (`live_schedulers()`); nothing in
  scheduling reads it, and it holds no scheduler alive.
"""

from __future__ import annotations

import enum
import functools
import types
import weakref
from collections import deque
from collections.abc import Callable


class SequenceStatus(enum.Enum):
    WAITING = "WAITING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


_W, _R, _F = SequenceStatus.WAITING, SequenceStatus.RUNNING, SequenceStatus.FINISHED
# (from, event) -> to; read-only
TRANSITIONS = types.MappingProxyType({(_W, "admit"): _R, (_R, "preempt"): _W, (_R, "finish"): _F})
_LIVE: weakref.WeakSet = weakref.WeakSet()


def live_schedulers() -> int:
    """How many schedulers exist right now (debugging aid)."""
    return len(_LIVE)


@functools.lru_cache(maxsize=8192)
def blocks_for(tokens: int, block_size: int) -> int:
    return -(-tokens // block_size)


class Sequence:
    def __init__(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.seq_id = seq_id
        self.prompt_len = prompt_len
        self.max_tokens = max_tokens
        self.output: list[int] = []
        self.num_computed = 0
        self.num_blocks = 0
        self.status = _W

    @property
    def num_tokens(self) -> int:
        return self.prompt_len + len(self.output)


def _move(seq: Sequence, event: str) -> None:
    seq.status = TRANSITIONS[(seq.status, event)]


def _try_grow(s: Scheduler, seq: Sequence, tokens: int) -> bool:
    need = blocks_for(tokens, s.block_size) - seq.num_blocks
    if need <= 0:
        return True
    if s.blocks_used + need > s.num_blocks:
        return False
    s.blocks_used += need
    seq.num_blocks += need
    return True


def _phase_running(s: Scheduler, budget: int, out: list[tuple[Sequence, int]]) -> int:
    i = 0
    while i < len(s.running) and budget > 0:
        seq = s.running[i]
        n = min(seq.num_tokens - seq.num_computed, budget)
        if _try_grow(s, seq, seq.num_computed + n):
            out.append((seq, n))
            budget -= n
            i += 1
            continue
        victim = s.running.pop()
        s.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        _move(victim, "preempt")
        s.waiting.appendleft(victim)
        s.num_preemptions += 1
    return budget


def _phase_waiting(s: Scheduler, budget: int, out: list[tuple[Sequence, int]]) -> int:
    while s.waiting and budget > 0 and len(s.running) < s.max_num_seqs:
        head = s.waiting[0]
        n = min(head.num_tokens - head.num_computed, budget)
        if not _try_grow(s, head, head.num_computed + n):
            break
        s.waiting.popleft()
        _move(head, "admit")
        s.running.append(head)
        out.append((head, n))
        budget -= n
    return budget


PHASES = (_phase_running, _phase_waiting)


class Scheduler:
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
        self._last: tuple[tuple[Sequence, int], ...] = ()
        _LIVE.add(self)

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def schedule(self) -> dict[str, int]:
        out: list[tuple[Sequence, int]] = []
        budget = self.max_num_batched_tokens
        for phase in PHASES:
            budget = phase(self, budget, out)
        self._last = tuple(out)
        return {seq.seq_id: n for seq, n in out}

    def update(self) -> list[Sequence]:
        done: list[Sequence] = []
        for seq, n in self._last:
            seq.num_computed += n
            if seq.num_computed != seq.num_tokens:
                continue
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if tok == self.eos or len(seq.output) >= seq.max_tokens:
                _move(seq, "finish")
                self.running.remove(seq)
                self.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
                self.finished.append(seq)
                done.append(seq)
        self._last = ()
        return done
