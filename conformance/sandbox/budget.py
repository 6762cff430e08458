"""One submission's total budget over every sandboxed run, scored or not, and robust cleanup of run folders.

A grader calls run_in_sandbox several times for one submission (corpus batches, exploration). Each
call has its own limits, so without a shared budget a submission that wastes time only where it
costs no points (sleeping or spinning in unscored runs) could hold a grading worker for as long as
all the calls' limits added up. ``submission_budget`` makes every call inside it draw on one CPU
budget (the process trees' CPU time, load-independent) and one wall-clock safety net.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

RESTARTS = 100  # a submission that crashes every workload stops after this many restarts, not at a wall time


@dataclass
class Budget:
    """CPU seconds left for the submission's process trees, and the wall-clock deadline of all its runs."""

    cpu_seconds: float
    wall_seconds: float
    restarts: int = RESTARTS  # fresh children after a crash or timeout: a count, so the cut is the same every run
    cpu_used: float = 0.0
    restarts_used: int = 0
    extra: float = 0.0  # CPU seconds the runs now drawing may spend beyond cpu_seconds (topped_up)
    started: float = field(default_factory=time.monotonic)

    @property
    def deadline(self) -> float:
        return self.started + self.wall_seconds

    def left(self, now_cpu: float = 0.0) -> bool:
        """Whether CPU remains, counting `now_cpu` seconds of the child running now."""
        return (self.cpu_used + now_cpu < self.cpu_seconds + self.extra and self.restarts_used <= self.restarts
                and time.monotonic() < self.deadline)

    def spent_on(self, now_cpu: float = 0.0) -> str:
        """What ran out (once left() is False): "budget", the CPU or the restarts, which only the submission's own
        work spends; "deadline", the wall time, which a loaded machine also spends."""
        own = self.cpu_used + now_cpu >= self.cpu_seconds + self.extra or self.restarts_used > self.restarts
        return "budget" if own else "deadline"

    def restarts_spent(self) -> bool:
        """Whether the restarts (not the CPU or the wall time) are what ran out."""
        return self.restarts_used > self.restarts and self.cpu_used < self.cpu_seconds + self.extra

    def why(self) -> str:
        more = f" and {self.extra:.3g} s more for these runs" if self.extra else ""
        return (f"the submission's total budget for all its runs ({self.cpu_seconds:g} s of CPU{more}, "
                f"{self.restarts} restarts after a crash or timeout, {self.wall_seconds:g} s of wall time) was spent")


_current: list[Budget] = []


def current() -> Budget | None:
    return _current[-1] if _current else None


@contextlib.contextmanager
def submission_budget(cpu_seconds: float, wall_seconds: float) -> Iterator[Budget]:
    """Every run_in_sandbox call inside this block draws on one budget (not thread-safe: one per process)."""
    if not cpu_seconds > 0 or not wall_seconds > 0:
        raise ValueError(f"a submission budget needs cpu_seconds > 0 and wall_seconds > 0, got {cpu_seconds!r} "
                         f"and {wall_seconds!r}")
    budget = Budget(float(cpu_seconds), float(wall_seconds))
    _current.append(budget)
    try:
        yield budget
    finally:
        _current.remove(budget)


@contextlib.contextmanager
def topped_up(share: float) -> Iterator[None]:
    """Inside this block, runs may spend `share` of the budget's CPU beyond it, besides what is left (nothing
    changes outside a submission_budget).

    A grade's held-out cases run after its public ones and count in every item (an item scores the lower of the
    two pass rates). A submission slower than its budget, cut where its CPU ran out, lost every held-out case at
    once, and so every item's points. With an allowance of their own, in proportion to their runs, the held-out
    runs are cut about as deep as the public ones, and the public runs keep the whole budget, as before."""
    budget = current()
    if budget is None or not share > 0:
        yield
        return
    before = budget.extra
    budget.extra = max(budget.cpu_used - budget.cpu_seconds, before) + share * budget.cpu_seconds  # (a reserve kept)
    try:
        yield
    finally:
        budget.extra = before


@contextlib.contextmanager
def reserved(share: float) -> Iterator[None]:
    """Inside this block, runs leave `share` of the budget's CPU unspent, for the runs after it (nothing changes
    outside a submission_budget).

    A grade's reach cases run after its other cases, and a submission too slow for its budget lost all of them at
    once, where it lost a share of the others: the runs before keep their share of the budget, the reach runs theirs,
    so each part is cut about as deep, and the whole budget is what it was."""
    budget = current()
    if budget is None or not share > 0:
        yield
        return
    before = budget.extra
    budget.extra = before - share * budget.cpu_seconds
    try:
        yield
    finally:
        budget.extra = before


def remove_tree(path: str) -> None:
    """Delete a run folder whatever a submission left in it (deep nesting, odd names, no permissions).

    shutil.rmtree recurses in Python and fails on a few thousand nested folders; `rm -rf` does not.
    Never raises: a folder that cannot be removed is left for the machine's temp cleaner.
    """
    if not os.path.lexists(path):
        return
    try:
        shutil.rmtree(path)
        return
    except (OSError, RecursionError):
        pass
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(["chmod", "-R", "u+rwx", path], capture_output=True, timeout=60, check=False)
        subprocess.run(["rm", "-rf", "--one-file-system", path], capture_output=True, timeout=120, check=False)
