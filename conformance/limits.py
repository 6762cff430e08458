"""Time limits on running a submission, and the ledger that stops a suite run after a few hangs.

A run of a workload may take RUN_SECONDS of CPU time (WALL_FACTOR times that of wall time, for
a submission that blocks instead of spinning); past it, CallTimeout is raised in the main thread.
Inside hang_ledger, every run that hangs is counted, and once the allowance is spent no run
starts: time_limit raises HangLimit instead, which the suite turns into "stopped early".

The submission runs in this process, beside Hypothesis, so the signal may land anywhere: in a gc
callback (Hypothesis installs one) or a finalizer, where Python prints an exception and drops it,
or in a submission's own `except BaseException`. So a limit that has passed stays passed:

- the timers repeat every RETRY_SECONDS, and each tick raises the time-out again;
- a tick inside a gc callback or a finalizer does not raise there (unless HOLD_BACK ticks in a
  row do: a finalizer that never returns must be ended too): the callback's caller gets the
  time-out at its next line (a trace function on its frame), and gc is paused;
- a tick after one that did not end the block raises again, and leaves the time-out to every
  frame of the block at its next line outside an `except` that handles it, so a loop that
  catches it still ends;
- whatever the block does after its time, it ends in CallTimeout (TimeLimit.__exit__).

No trace function is set while another tracer (a debugger, coverage) is: then only the repeated
ticks stop such a run, once one lands outside the callback or the `try`.
"""

from __future__ import annotations

import gc
import signal
import sys
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import CodeType, FrameType, TracebackType
from typing import Any

RUN_SECONDS = 10.0  # a workload run that takes more CPU time is reported as a hang
WALL_FACTOR = 6  # ... and one that takes this many times longer in wall time (it may be blocked, not spinning)
RETRY_SECONDS = 0.05  # once a limit has passed, the time-out is raised again this often until the block ends
HOLD_BACK = 2  # ticks in a row a time-out waits for a callback to return before it is raised inside it


# What code of a submission run in this process may raise and be named for, as the sandbox's child names anything:
# SystemExit (sys.exit) and GeneratorExit too, which are no Exception; not KeyboardInterrupt, the person running
# check pressing Ctrl-C, nor this module's own CallTimeout and HangLimit, each handled where it is raised.
RAISED: tuple[type[BaseException], ...] = (Exception, SystemExit, GeneratorExit)


class CallTimeout(BaseException):
    """The run did not end within its limit (a BaseException, so a submission's `except Exception` cannot hide it)."""


STOPPED: tuple[type[BaseException], ...] = (*RAISED, CallTimeout)  # a call that raised, or ran out of time


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
    hung: set[Hashable] = field(default_factory=set)  # the workloads that hung: a later phase need not rerun them

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


def time_limit(seconds: float, what: str = "the run") -> TimeLimit:
    """Raise CallTimeout in the main thread after `seconds` of CPU time, or WALL_FACTOR times that of wall time.

    CPU time, so that a run on a loaded machine is not called a hang (the verdict must
    not depend on the load); the wall-clock backstop catches a submission that blocks
    instead of spinning. Set once per run, not per call: arming a timer costs about as
    much as a call. No limit where signals are unavailable. Inside hang_ledger, a run that
    hangs is counted, and no run starts once the ledger's allowance is spent. `what` names
    the block in the message: "the run", "the call".
    """
    return TimeLimit(seconds, what)


class TimeLimit:
    """The limit over one block (made by time_limit). `passed` is the time-out's message once either timer fired."""

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self.passed: str | None = None
        self.held_back = 0  # ticks in a row held back because a callback that drops exceptions was running
        self._armed = False
        self._handlers: dict[int, Any] = {}
        self._timers: list[tuple[float, float]] = []  # the timers as they were: an enclosing limit's
        self._outer: TimeLimit | None = None
        self._hook: Callable[[Any], object] | None = None  # the unraisablehook this limit replaced, if it did
        self._gc_paused = False
        self._entry: FrameType | None = None  # the frame of the `with` statement: no frame above it is traced
        self._traced: list[FrameType] = []  # frames given _deliver as their trace function
        self._unwinding: set[FrameType] = set()  # traced frames an exception has just reached (_deliver)

    def __enter__(self) -> TimeLimit:
        ledger = _LEDGER.get()
        if ledger is not None and ledger.hangs >= ledger.allowed:
            raise HangLimit(f"{ledger.hangs} runs did not end in time")
        if not hasattr(signal, "setitimer"):
            return self
        try:
            self._handlers = {sig: signal.signal(sig, _raise_timeout) for sig in (signal.SIGPROF, signal.SIGALRM)}
        except ValueError:  # not the main thread: no limit
            return self
        global _ACTIVE
        self._outer, _ACTIVE = _ACTIVE, self
        self._entry = sys._getframe(1)
        if sys.unraisablehook is not _drop_swallowed_timeout:  # else an enclosing limit has set it
            self._hook, sys.unraisablehook = sys.unraisablehook, _drop_swallowed_timeout
        self._timers = [signal.setitimer(signal.ITIMER_PROF, self.seconds, RETRY_SECONDS),
                        signal.setitimer(signal.ITIMER_REAL, self.seconds * WALL_FACTOR, RETRY_SECONDS)]
        self._armed = True
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._armed:
            self._disarm()
        if self.passed is None or (kind is not None and not issubclass(kind, Exception)):
            return  # in time, or ending in CallTimeout already (or HangLimit, KeyboardInterrupt)
        raise CallTimeout(self.passed) from error  # dropped or caught where it was raised: still a time-out

    def expire(self, signum: int) -> str:
        """Record that a limit passed, once: the message, one hang on the ledger, gc paused; return the message.

        Paused, so that no collection runs a gc callback or a finalizer of a cycle until the
        block ends: a time-out raised there is dropped.
        """
        if self.passed is None:
            if signum == signal.SIGPROF:
                self.passed = f"{self.what} did not end within {self.seconds:g} s of CPU time (an endless loop?)"
            else:
                self.passed = (f"{self.what} did not end within {self.seconds * WALL_FACTOR:g} s of wall time, though "
                               f"it used less than its {self.seconds:g} s of CPU time (blocked, or waiting?)")
            count_hang()  # counted here: the run that hung may catch the CallTimeout itself (drivers._run does)
            if gc.isenabled():
                gc.disable()
                self._gc_paused = True
        return self.passed

    def deliver_from(self, frame: FrameType | None) -> None:
        """Have `frame` and each frame between it and the block's raise the time-out at their next line (_deliver).

        Not while another tracer is set: a trace function is the only way to raise in a given
        frame, and there is one per thread.
        """
        chain = []
        while frame is not None and frame is not self._entry:
            chain.append(frame)
            frame = frame.f_back
        if frame is None or sys.gettrace() not in (None, _trace_no_calls):
            return  # not inside this block (a stray tick), or traced by someone else
        for f in chain:
            f.f_trace = _deliver
            f.f_trace_lines = True
        self._traced += chain
        sys.settrace(_trace_no_calls)  # a frame's own trace function sees its lines only while tracing is on

    def _disarm(self) -> None:
        global _ACTIVE
        self._armed = False
        prof, real = self._timers
        signal.setitimer(signal.ITIMER_PROF, *prof)  # an enclosing limit goes on with the time it had left
        signal.setitimer(signal.ITIMER_REAL, *real)
        for sig, handler in self._handlers.items():
            signal.signal(sig, handler)
        _ACTIVE = self._outer
        if self._hook is not None and sys.unraisablehook is _drop_swallowed_timeout:  # else the submission's own
            sys.unraisablehook = self._hook
        for frame in self._traced:
            frame.f_trace = None
        if sys.gettrace() is _trace_no_calls:
            sys.settrace(None)
        self._traced.clear()
        self._unwinding.clear()
        self._entry = None
        if self._gc_paused:
            gc.enable()


_ACTIVE: TimeLimit | None = None  # the innermost armed limit: what the signal handler acts on


def count_hang() -> None:
    """Count a run that hung toward the ledger in force, if any (a wire program that stopped answering, say)."""
    ledger = _LEDGER.get()
    if ledger is not None:
        ledger.hangs += 1


def note_hung(what: Hashable) -> None:
    """Remember what hung (a workload) in the ledger in force, so that a later phase can leave it out."""
    ledger = _LEDGER.get()
    if ledger is not None:
        ledger.hung.add(what)


def _raise_timeout(signum: int, frame: FrameType | None) -> None:
    """The handler of both timers: raise the time-out where the run is, unless that drops it.

    Inside a gc callback or a finalizer, the time-out is left to the callback's caller; after
    HOLD_BACK ticks there it is raised inside all the same, since a finalizer that never returns
    must be ended too (the raise that ends it is dropped quietly). A tick after one that raised
    means the block caught or dropped that raise: every frame of the block gets it next.
    """
    limit = _ACTIVE
    if limit is None or _in(frame, _OWN):
        return  # pending when its block ended, or inside this module: __exit__ or the next tick raises
    again = limit.passed is not None
    message = limit.expire(signum)
    inside, caller = _callback_caller(frame)
    if inside and limit.held_back < HOLD_BACK:
        limit.held_back += 1
        limit.deliver_from(caller)
        return
    limit.held_back = 0
    if again:
        limit.deliver_from(frame)
    raise CallTimeout(message)


def _callback_caller(frame: FrameType | None) -> tuple[bool, FrameType | None]:
    """Whether `frame` runs inside a gc callback or a finalizer (where Python prints an exception and drops
    it), and the frame that the outermost such callback interrupted.

    Weakref callbacks and the like cannot be told from their frames: a time-out raised in
    them is dropped quietly (_drop_swallowed_timeout) and raised again by the next tick.
    """
    callbacks = {getattr(getattr(cb, "__func__", cb), "__code__", None) for cb in gc.callbacks}
    callbacks.add(_drop_swallowed_timeout.__code__)  # a raise while a dropped one is reported is dropped too
    inside, caller = False, None
    while frame is not None:
        if frame.f_code in callbacks or frame.f_code.co_name == "__del__":
            inside, caller = True, frame.f_back
        frame = frame.f_back
    return inside, caller


def _in(frame: FrameType | None, codes: frozenset[CodeType]) -> bool:
    while frame is not None:
        if frame.f_code in codes:
            return True
        frame = frame.f_back
    return False


def _trace_no_calls(frame: FrameType, event: str, arg: object) -> None:
    """The global trace function while a time-out waits for its frames: it traces no frame it sees called."""
    return None


def _deliver(frame: FrameType, event: str, arg: object) -> Callable[..., object] | None:
    """The trace function of a frame that owes the block its time-out: raise it at the frame's next line.

    Not in an `except` or `finally` that handles a time-out already (the driver's own, say), and not
    at the first line after an exception reached the frame: that is where its handler starts, before
    Python has saved the exception it handles, and a raise there unbalances that bookkeeping. Raising
    ends the tracing (Python turns the global trace function off).
    """
    limit = _ACTIVE
    if limit is None or limit.passed is None:
        return None
    if event == "exception":
        limit._unwinding.add(frame)
    if event != "line":
        return _deliver
    if frame in limit._unwinding:
        limit._unwinding.discard(frame)
        return _deliver
    if isinstance(sys.exc_info()[1], CallTimeout):
        return _deliver
    frame.f_trace = None
    raise CallTimeout(limit.passed)


def _drop_swallowed_timeout(unraisable: Any) -> None:
    """sys.unraisablehook while a limit is armed: a time-out that a callback dropped is not printed.

    Nor is it lost: the limit has passed, so the callback's caller or the next tick raises it
    again, and the block ends in CallTimeout however it ends. Anything else goes to the hook
    that was there before.
    """
    if isinstance(unraisable.exc_value, CallTimeout):
        return
    limit, hook = _ACTIVE, None
    while limit is not None and hook is None:  # the innermost limit that replaced a hook holds the one before
        hook = limit._hook
        limit = limit._outer
    (hook or sys.__unraisablehook__)(unraisable)


_OWN = frozenset(f.__code__ for f in (TimeLimit.__enter__, TimeLimit.__exit__, TimeLimit._disarm, TimeLimit.expire,
                                      TimeLimit.deliver_from, _raise_timeout, _deliver, _trace_no_calls))
