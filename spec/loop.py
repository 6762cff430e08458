"""The run protocol of docs/trace-format.md, stated once: which requests each step adds, and when a run ends.

Before the schedule() of step t, every request whose arrival is t is added, in list order; then
schedule() and update(). A run ends when every request has arrived and update() has reported it
finished, at a step limit, or after STALL_STEPS empty batches in a row with every request arrived.
``Steps`` owns that order and that end, nothing else: what a call is and what is recorded belongs to its
driver (the reference model's ``spec.trace.run``, the conformance drivers in process, interleaved and in
the sandbox child, the tests, the benchmarks).
It imports nothing of the project, so the sandbox child runs this very text without the project.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator
from typing import Generic, TypeVar

R = TypeVar("R")
RESAMPLE_SHIFT = 1000  # added to a token per earlier sample of its position, in a run that probes resampling: a real
# model is not a function, so a scheduler that loses tokens and samples their positions again must not get them back
STRAY = "stray-"  # what the ids a caller writes into a returned dict it changes start with (changed_by_caller)
STALL_STEPS = 64  # empty batches in a row, every request arrived, after which a run ends as at its limit: a feasible
# workload never has one (spec/feasible.py), and a scheduler stuck there would only repeat them up to the limit


def changed_by_caller(batch: dict[str, int], known: Container[str], step: int) -> None:
    """What the caller does to the dict schedule() returned at `step`, in a run that probes it (a fresh-dict probe):
    it owns the dict and may change it in any way, so it changes it each way in turn: in steps 1, 4, ... it writes
    as many entries under other ids, each count one more; in steps 2, 5, ... it empties it; in steps 3, 6, ... it
    adds one to every count. A scheduler that kept the dict and reads it in update(), by its ids, its counts or its
    length, does something else within three steps. Through dict's own methods: a subclass's are never called."""
    pairs = list(dict.items(batch))
    if step % 3 == 0:
        for key, n in pairs:
            dict.__setitem__(batch, key, n + 1 if type(n) is int else 1)
        return
    dict.clear(batch)
    if step % 3 == 2:
        return
    for i, (_, n) in enumerate(pairs):
        key = f"{STRAY}{i}"
        while key in known:  # never an id of the workload
            key = STRAY + key
        dict.__setitem__(batch, key, n + 1 if type(n) is int else 1)


class Steps(Generic[R]):
    """The steps of one run: iterate for (step, requests to add); tell it what each update() finished."""

    def __init__(self, requests: Iterable[R], arrival: Callable[[R], int], seq_id: Callable[[R], str],
                 limit: int) -> None:
        self.pending: deque[R] = deque(sorted(requests, key=arrival))  # stable: one arrival keeps list order
        self.unfinished = {seq_id(r) for r in self.pending}  # arrived or not, not yet reported finished
        self.arrival, self.limit = arrival, limit
        self.step = 0  # the step running now; 0 before the first
        self.idle = 0  # empty batches in a row since every request arrived

    @property
    def done(self) -> bool:
        """Every request has arrived and update() has reported it finished."""
        return not self.pending and not self.unfinished

    @property
    def stalled(self) -> bool:
        """STALL_STEPS empty batches in a row, every request arrived: the run ends unfinished."""
        return self.idle >= STALL_STEPS

    def next(self) -> list[R] | None:
        """Start the next step: the requests to add before its schedule(); None once done, at the limit or
        stalled."""
        if self.done or self.step >= self.limit or self.stalled:
            return None
        self.step += 1
        added = []
        while self.pending and self.arrival(self.pending[0]) <= self.step:
            added.append(self.pending.popleft())
        return added

    def finished(self, seq_ids: Iterable[str], scheduled: bool = True) -> None:
        """Record what this step's update() reported finished, and whether its schedule() ran anything."""
        self.unfinished.difference_update(seq_ids)
        self.idle = 0 if scheduled or self.pending else self.idle + 1

    def __iter__(self) -> Iterator[tuple[int, list[R]]]:
        while (added := self.next()) is not None:
            yield self.step, added
