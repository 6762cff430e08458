"""Time limits on running a submission, and the ledger that stops a suite run after a few hangs.

A run of a workload may take RUN_SECONDS of CPU time (WALL_FACTOR times that of wall time, for
a submission that blocks instead of spinning); past it, CallTimeout is raised in the main thread.
Inside hang_ledger, every run that hangs is counted, and once the allowance is spent no run
starts: time_limit raises HangLimit instead, which the suite turns into "stopped early".
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

RUN_SECONDS = 10.0  # a workload run that takes more CPU time is reported as a hang
WALL_FACTOR = 6  # ... and one that takes this many times longer in wall time (it may be blocked, not spinning)


class CallTimeout(BaseException):
    """The run did not end within RUN_SECONDS (a BaseException, so a submission's `except Exception` cannot hide it)."""


class HangLimit(BaseException):
    """Enough runs have hung: stop running the submission. Raised before a run starts, never inside one.

    A BaseException so that no `except Exception` between here and the suite (Hypothesis's
    included) mistakes it for a finding.
    """


@dataclass
class HangLedger:
    """How many timed runs may still hang before the suite stops running the submission.

    Counting hangs, not seconds, keeps the stop deterministic: an endless loop hangs
    on every machine, and the same runs come before it in the same order.
    """

    allowed: int
    hangs: int = 0

    def allow(self, more: int) -> None:
        """Give a later phase (shrinking, say) its own allowance on top of the hangs seen so far."""
        self.allowed = self.hangs + more


_LEDGER: ContextVar[HangLedger | None] = ContextVar("schedcheck_hang_ledger", default=None)


@contextmanager
def hang_ledger(allowed: int) -> Iterator[HangLedger]:
    """Within this block, time_limit raises HangLimit once `allowed` runs have hung."""
    ledger = HangLedger(allowed)
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise CallTimeout in the main thread after `seconds` of CPU time, or WALL_FACTOR times that of wall time.

    CPU time, so that a run on a loaded machine is not called a hang (the verdict must
    not depend on the load); the wall-clock backstop catches a submission that blocks
    instead of spinning. Set once per run, not per call: arming a timer costs about as
    much as a call. No limit where signals are unavailable. Inside hang_ledger, a run that
    hangs is counted, and no run starts once the ledger's allowance is spent.
    """
    ledger = _LEDGER.get()
    if ledger is not None and ledger.hangs >= ledger.allowed:
        raise HangLimit(f"{ledger.hangs} runs did not end in time")
    if not hasattr(signal, "setitimer"):
        yield
        return
    try:
        previous = {sig: signal.signal(sig, _raise_timeout) for sig in (signal.SIGPROF, signal.SIGALRM)}
    except ValueError:  # not the main thread
        yield
        return
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * WALL_FACTOR)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def count_hang() -> None:
    """Count a run that hung toward the ledger in force, if any (a wire program that stopped answering, say)."""
    ledger = _LEDGER.get()
    if ledger is not None:
        ledger.hangs += 1


def _raise_timeout(signum: int, frame: object) -> None:
    count_hang()  # counted here: the run that hung may catch the CallTimeout itself (drivers._run does)
    if signum == signal.SIGPROF:
        raise CallTimeout(f"the run did not end within {RUN_SECONDS:g} s of CPU time (an endless loop?)")
    raise CallTimeout(f"the run did not end within {RUN_SECONDS * WALL_FACTOR:g} s (blocked, or an endless loop?)")
