"""The floor: the least work any implementation of the API must do per step, and nothing else.

It replays a recorded schedule: who runs at each step is given (no block
accounting, admission or preemption decisions). What is left is what every
scheduler has to do: one loop over the scheduled sequences computing
n = min(num_tokens - num_computed, budget) and building the returned dict, and in
update() advancing num_computed, calling sample_fn at catch-up, appending the
token and reporting finished sequences. A preempted sequence's num_computed is
reset from the record so that n and the sample calls stay those of the real run.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence as Seqs

from impl.scheduler import Sequence, SequenceStatus

_FINISHED = SequenceStatus.FINISHED
_NO_EOS = object()

Plan = list[tuple[Seqs[Sequence], Seqs[Sequence]]]  # per step: (scheduled in order, reset before the step)


class FloorScheduler:
    """API-shaped replay of a recorded run: add / schedule / update with the minimum per-step work."""

    def __init__(self, plan: Plan, max_num_batched_tokens: int, sample_fn: Callable[[Sequence], int],
                 eos: int | None = None) -> None:
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self.waiting: list[Sequence] = []  # every added sequence; the plan decides who runs
        self.finished: list[Sequence] = []
        self._plan = plan
        self._step = 0
        self._scheduled: Seqs[Sequence] = ()
        self._batch: dict[str, int] = {}

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def schedule(self) -> dict[str, int]:
        scheduled, resets = self._plan[self._step]
        self._step += 1
        for seq in resets:
            seq.num_computed = 0
        budget = self.max_num_batched_tokens
        batch: dict[str, int] = {}
        for seq in scheduled:
            n = seq.prompt_len + len(seq.output) - seq.num_computed
            if n > budget:
                n = budget
            batch[seq.seq_id] = n
            budget -= n
        self._scheduled = scheduled
        self._batch = batch
        return batch.copy()

    def update(self) -> list[Sequence]:
        sample = self.sample_fn
        eos = _NO_EOS if self.eos is None else self.eos
        finished = self.finished
        done: list[Sequence] = []
        for seq, n in zip(self._scheduled, self._batch.values(), strict=False):
            computed = seq.num_computed + n
            seq.num_computed = computed
            output = seq.output
            if computed == seq.prompt_len + len(output):
                token = sample(seq)
                output.append(token)
                if token == eos or len(output) >= seq.max_tokens:
                    seq.status = _FINISHED
                    finished.append(seq)
                    done.append(seq)
        return done
