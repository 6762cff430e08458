"""A time limit holds wherever its signal lands: in a gc callback, in a finalizer, or in code that catches it.

Python drops an exception raised in a gc callback or a finalizer ("Exception ignored in ..."), and
Hypothesis installs a gc callback in the process that runs the submission. Each submission here
burns CPU_SECONDS of CPU where the time-out is dropped or caught, then returns normally; the run
must still end as a time-out soon after its limit (LIMIT), with nothing printed as ignored.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import time

import pytest

from conformance import drivers
from conformance.adapters import SpecAdapter
from conformance.limits import CallTimeout, time_limit
from spec.model import Config
from spec.trace import Request, make_workload

LIMIT = 0.3  # CPU seconds per run
CPU_SECONDS = 2.0  # what each submission burns when nothing stops it
W = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 2)])


def burn_until(deadline: float) -> None:
    while time.process_time() < deadline:
        pass


class Cycle:
    """Cyclic garbage: only a collection frees it, so gc callbacks run often."""

    def __init__(self) -> None:
        self.me = self


def spinning_callback(phase: str, info: dict[str, int]) -> None:
    """A gc callback that takes long, so that most signals land in it (Hypothesis's is quick, but runs as often)."""
    burn_until(time.process_time() + 0.005)


class GarbageMaker(SpecAdapter):
    """schedule() makes cyclic garbage for CPU_SECONDS; spinning_callback runs at every collection."""

    def schedule(self):
        deadline = time.process_time() + CPU_SECONDS
        while time.process_time() < deadline:
            Cycle()
        return super().schedule()


DEADLINE = [0.0]


class Finalized:
    def __del__(self) -> None:
        burn_until(DEADLINE[0])  # never returns before the deadline unless an exception ends it


class SlowFinalized:
    def __del__(self) -> None:
        burn_until(time.process_time() + 0.005)


class FinalizerLoop(SpecAdapter):
    """schedule() drops objects whose finalizer spins (until DEADLINE, or 5 ms each) for CPU_SECONDS."""

    kind: type = Finalized

    def schedule(self):
        DEADLINE[0] = time.process_time() + CPU_SECONDS
        while time.process_time() < DEADLINE[0]:
            self.kind()
        return super().schedule()


class SlowFinalizerLoop(FinalizerLoop):
    kind = SlowFinalized


class CatchesEverything(SpecAdapter):
    """schedule() spins, and catches whatever interrupts it (a BaseException too) until CPU_SECONDS have passed."""

    def schedule(self):
        deadline = time.process_time() + CPU_SECONDS
        while time.process_time() < deadline:
            with contextlib.suppress(BaseException):  # the point: a submission may swallow the time-out
                burn_until(deadline)
        return super().schedule()


@pytest.fixture
def ignored(monkeypatch):
    """What reached sys.unraisablehook (Python's "Exception ignored in ..."), and LIMIT as the run's limit."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(repr(u.exc_value)))
    monkeypatch.setattr(drivers, "RUN_SECONDS", LIMIT)
    return seen


def timed_run(factory):
    start = time.process_time()
    observed = drivers.run_workload(W, factory, white_box=False)
    return observed, time.process_time() - start


TRACED = pytest.mark.skipif(sys.gettrace() is not None, reason="a tracer (coverage, a debugger) is set: the time-out "
                            "cannot be raised in a given frame, and only the repeated ticks stop these, later")


@pytest.mark.long
@pytest.mark.parametrize("factory", [GarbageMaker, pytest.param(FinalizerLoop, marks=TRACED),
                                     pytest.param(SlowFinalizerLoop, marks=TRACED),
                                     pytest.param(CatchesEverything, marks=TRACED)])
def test_the_limit_stops_a_run_whose_time_out_is_dropped_or_caught(factory, ignored):
    """Before: the one raise was dropped in the callback (or caught), the timer was spent, and the run burnt all
    CPU_SECONDS (2.0 s of CPU under a 0.3 s limit) and ended "done"; now a time-out within about twice the limit."""
    gc.callbacks.append(spinning_callback)
    try:
        for _ in range(2):  # the same every time
            observed, cpu = timed_run(factory)
            assert observed["error"] is not None and observed["error"]["kind"] == "CallTimeout", observed["stop"]
            assert cpu < 3 * LIMIT, f"{factory.__name__} ran {cpu:.2f} s of CPU under a {LIMIT} s limit"
    finally:
        gc.callbacks.remove(spinning_callback)
    assert gc.isenabled()  # paused while the time-out was delivered, and back on after
    assert ignored == []  # no "Exception ignored in <gc callback>" for a time-out


class Collects(SpecAdapter):
    """schedule() runs full collections for CPU_SECONDS: a signal that arrives during one is handled in the
    first Python code after it, a gc callback's."""

    def schedule(self):
        deadline = time.process_time() + CPU_SECONDS
        while time.process_time() < deadline:
            gc.collect()
        return super().schedule()


@pytest.mark.long
def test_the_limit_holds_beside_hypothesis_gc_callback(ignored):
    """Before: "Exception ignored in: <function gc_cumulative_time.<locals>.gc_callback>" and the run went on
    for all CPU_SECONDS, ending "done"."""
    junkdrawer = pytest.importorskip("hypothesis.internal.conjecture.junkdrawer")
    if not hasattr(junkdrawer, "gc_cumulative_time"):
        pytest.skip("this Hypothesis installs no gc callback")
    junkdrawer.gc_cumulative_time()  # installs the callback once per process, as every Hypothesis run does
    assert gc.callbacks
    gc.freeze()  # what earlier tests in this process left (a grade's caches: millions of objects) is not this test's
    try:  # heap: a signal waits for the collection it lands in, and theirs took 1.26 s under a 0.3 s limit
        heap = [[i] for i in range(300_000)]  # live containers, so that every full collection takes a while
        for _ in range(3):
            observed, cpu = timed_run(Collects)
            assert observed["error"] is not None and observed["error"]["kind"] == "CallTimeout", observed["stop"]
            assert cpu < 3 * LIMIT, f"ran {cpu:.2f} s of CPU under a {LIMIT} s limit"
        del heap
    finally:
        gc.unfreeze()
    assert ignored == []


def test_a_block_that_catches_its_time_out_still_ends_in_one():
    """Before: the block returned normally and nothing said its limit had passed."""
    with pytest.raises(CallTimeout, match=r"the run did not end within 0\.2 s of CPU time"), time_limit(0.2):
        deadline = time.process_time() + 1.0
        while time.process_time() < deadline:
            try:
                burn_until(deadline)
            except CallTimeout:
                break  # and carry on as if nothing happened


def test_a_limit_inside_another_leaves_the_outer_one_armed():
    with pytest.raises(CallTimeout, match=r"within 0\.3 s"), time_limit(0.3):
        with time_limit(5.0):
            pass
        burn_until(time.process_time() + 2.0)


def test_a_limit_walks_nothing_of_a_frozen_heap(monkeypatch):
    """A grading worker's heap is frozen (conformance/grading/warm.py) and holds millions of objects; its diagnosis
    runs thousands of workloads, each under a limit. Asking the collector whether the heap is frozen walks all of it
    (gc.get_freeze_count counts the frozen objects one by one): a class of seven took an hour."""
    gc.freeze()
    try:
        def walk() -> int:
            raise AssertionError("the limit walked the frozen heap (gc.get_freeze_count)")
        monkeypatch.setattr(gc, "get_freeze_count", walk)
        with time_limit(5.0):
            made = [[i] for i in range(2**10)]
        assert made
    finally:
        gc.unfreeze()
