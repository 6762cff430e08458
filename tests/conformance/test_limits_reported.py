"""A run stopped by its time limit is reported as a time-out (H.timeout), whichever run of a check it stopped,
and its message states the limit that was in force."""

from __future__ import annotations

import gc
import time

import pytest

from conformance import drivers, limits
from conformance.adapters import SpecAdapter
from conformance.checks import probes
from conformance.checks.checkers import hygiene
from conformance.checks.workload import check_workload
from spec.model import Config
from spec.trace import Request, make_workload
from tests.conformance.test_limits_swallowed import GarbageMaker, spinning_callback

W = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 2), Request("a2", 1, 1)])


class HangsWhenChanged(SpecAdapter):
    """Keeps the dict schedule() returned as its batch, and spins in update() once a caller has changed it."""

    def schedule(self):
        self.kept = super().schedule()
        self.was = dict(self.kept)
        return self.kept

    def update(self):
        while self.kept != self.was:
            pass
        return super().update()


class Spins(SpecAdapter):
    def schedule(self):
        while True:
            pass


class Sleeps(SpecAdapter):
    def schedule(self):
        time.sleep(30)


def test_a_hang_in_the_fresh_dict_run_is_a_time_out(monkeypatch):
    """Before: [H.fresh_dict] "... return a copy" for a run that did not end; now [H.timeout]."""
    monkeypatch.setattr(drivers, "RUN_SECONDS", 0.2)
    [f] = probes.fresh_dict(W, HangsWhenChanged)
    assert f.rule == "H.timeout" and f.check == "hygiene", f.message
    assert "within 0.2 s of CPU time" in f.message and "changed every dict schedule() returned" in f.message
    assert f.call == "update" and f.step == 1


def test_a_workload_that_hangs_where_its_time_out_is_dropped_is_a_time_out_every_time(monkeypatch):
    """Before: the dropped time-out let the plain run end "done", so hygiene was judged on the probes' runs
    instead (H.fresh_dict in one run, H.timeout in another); now the plain run's H.timeout, every time."""
    monkeypatch.setattr(drivers, "RUN_SECONDS", 0.2)
    gc.callbacks.append(spinning_callback)
    try:
        rules = [check_workload(W, GarbageMaker, white_box=False, only=("hygiene",))["hygiene"] for _ in range(3)]
    finally:
        gc.callbacks.remove(spinning_callback)
    assert [f.rule if f is not None else None for f in rules] == ["H.timeout"] * 3


@pytest.mark.parametrize("seconds", [0.25, 0.4])
def test_the_message_states_the_cpu_limit_in_force(monkeypatch, seconds):
    """Before: "did not end within 10 s of CPU time" whatever the limit was."""
    monkeypatch.setattr(drivers, "RUN_SECONDS", seconds)
    [f] = hygiene(W, drivers.run_workload(W, Spins, white_box=False))
    assert f.rule == "H.timeout" and f.call == "schedule"
    assert f"the run did not end within {seconds:g} s of CPU time" in f.message, f.message


def test_the_message_states_the_wall_limit_when_that_fired(monkeypatch):
    """Before: "did not end within 60 s (blocked, ...)" after 0.3 s."""
    monkeypatch.setattr(drivers, "RUN_SECONDS", 0.05)
    start = time.perf_counter()
    [f] = hygiene(W, drivers.run_workload(W, Sleeps, white_box=False))
    assert time.perf_counter() - start < 5
    assert f.rule == "H.timeout"
    wall = 0.05 * limits.WALL_FACTOR
    assert f"within {wall:g} s of wall time, though it used less than its 0.05 s of CPU time" in f.message, f.message
