"""P07: a continuous-batching scheduler with chunked prefill and recompute preemption.

Fill in the methods that raise NotImplementedError, then run ``./check.sh p07``: it names
each method that is still missing, and once they are all there it checks every rule and
prints the smallest workload where this scheduler and the spec part ways.

The interface is fixed (``schedcheck api`` prints it); the rules, each with the id used in
every finding, are in ``schedcheck rules``. The ids below (P1, P2.stop, U.finish, I1..I6)
are those rules.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable


class SequenceStatus(enum.Enum):
    """Which queue a sequence is in (I6: exactly one, with the matching status)."""

    WAITING = "WAITING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


class Sequence:
    """One request and its progress."""

    def __init__(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.seq_id = seq_id
        self.prompt_len = prompt_len
        self.max_tokens = max_tokens
        self.output: list[int] = []  # sampled tokens; kept across preemption (I4)
        self.num_computed = 0  # tokens whose KV is computed
        self.num_blocks = 0  # KV blocks this sequence holds
        self.status = SequenceStatus.WAITING

    @property
    def num_tokens(self) -> int:
        """prompt_len + len(output): what a sequence must have computed before it samples (U.sample)."""
        return self.prompt_len + len(self.output)


class Scheduler:
    """Each step: schedule() decides the batch under three budgets at once, update() applies it."""

    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int, max_num_batched_tokens: int,
                 sample_fn: Callable[[Sequence], int], eos: int | None = None) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self.waiting: deque[Sequence] = deque()  # index 0 is the head
        self.running: list[Sequence] = []  # admission order; running[-1] is the next victim
        self.finished: list[Sequence] = []  # finishing order
        self.blocks_used = 0  # blocks held by running sequences (I1)
        self.num_preemptions = 0

    def add(self, seq: Sequence) -> None:
        """Append seq to the tail of waiting (I5: waiting keeps arrival order)."""
        raise NotImplementedError("Scheduler.add")

    def schedule(self) -> dict[str, int]:
        """Decide this step: seq_id -> tokens to compute, in scheduling order; a new dict every call.

        One token budget, max_num_batched_tokens, is shared by both phases (I2).
        Phase 1 (P1): for each running sequence in order, n = min(gap, budget left); if its blocks
        grow to hold num_computed + n, schedule n. If they cannot (P1.preempt), preempt running[-1]
        and try the same sequence again; if the victim was the sequence itself (P1.skip_self), it is
        skipped. Phase 2: admit the head of waiting while fewer than max_num_seqs run (P2.full) and
        budget is left, with n = min(gap, budget left) (P2); the first head that does not fit stops
        admission: nobody behind it jumps the queue (P2.stop).
        """
        raise NotImplementedError("Scheduler.schedule")

    def update(self) -> list[Sequence]:
        """Apply the last batch, in batch order; return the sequences that finished in it.

        U.compute: num_computed += n. U.partial: still below num_tokens, nothing is sampled.
        U.sample: caught up, call sample_fn(seq) once and append the token. U.finish: the token is
        eos, or len(output) >= max_tokens: FINISHED, out of running, blocks returned, into finished.
        """
        raise NotImplementedError("Scheduler.update")

    def _blocks_for(self, tokens: int) -> int:
        """ceil(tokens / block_size): the blocks that hold `tokens` tokens."""
        raise NotImplementedError("Scheduler._blocks_for")

    def _try_grow(self, seq: Sequence, tokens: int) -> bool:
        """Give seq the blocks for `tokens` if the pool has them (I1: blocks_used <= num_blocks); else change
        nothing."""
        raise NotImplementedError("Scheduler._try_grow")

    def _preempt(self) -> Sequence:
        """Preempt running[-1]: return its blocks, num_computed = 0, WAITING, to the head of waiting (I4, I5);
        keep its output (recompute preemption) and count one preemption."""
        raise NotImplementedError("Scheduler._preempt")
