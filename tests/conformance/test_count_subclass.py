"""A count of schedule()'s dict that is a subclass of int is read by its int value and noted, in `check` and in the
grader alike: `dict[str, int]` admits it, and docs/api.md reads a subclass of a documented type the same.

Both commands failed a correct scheduler whose counts were an int subclass (0/100; from outside). Its methods are
never called (`int.__index__` reads its value), so one that lies in `__eq__`, `__int__` or `__index__` is read by
what it holds; `bool` stays refused (tests/grading/hostile/bool_n.py).
"""

from __future__ import annotations

from pathlib import Path

from conformance import drivers
from conformance.adapters import load_target
from conformance.checks import checkers, whitebox
from conformance.grading.observe import observed_trace
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from spec.golden import case_named
from spec.model import Config
from spec.trace import Request, make_workload, run_workload

IMPL = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"
COUNTS = '''

class Count(int):
    """A count that lies about itself: equal to anything, shown as another number."""

    def __eq__(self, other):
        return True

    __hash__ = int.__hash__

    def __int__(self):
        return 7

    def __index__(self):
        return 7

    def __repr__(self):
        return "Count(?)"


_schedule = Scheduler.schedule


def schedule(self):
    return {k: Count(v) for k, v in _schedule(self).items()}


Scheduler.schedule = schedule
'''
LIMITS = Limits(workload_seconds=2.0, workload_cpu_seconds=2, startup_seconds=5.0, run_seconds=30.0,
                cpu_seconds=20, memory_bytes=256 << 20, processes=16, output_bytes=1 << 20)
WORKLOADS = [case_named("budget16").workload,
             make_workload(Config(3, 2, 8, 64), [Request("a1", 2, 3), Request("a2", 2, 3)], name="self-preemption")]


def test_int_subclass_counts_are_read_by_their_value_in_both_commands(tmp_path: Path) -> None:
    path = tmp_path / "p07_scheduler.py"
    path.write_text(IMPL.read_text() + COUNTS)
    sandboxed = run_in_sandbox(path, WORKLOADS, LIMITS)
    factory = load_target(str(path))
    for workload, got in zip(WORKLOADS, sandboxed.workloads, strict=True):
        assert got.status == "ok", got.cause
        graded, checked = observed_trace(workload, got), drivers.run_workload(workload, factory)
        want = [[list(p) for p in s.batch] for s in run_workload(workload).steps]
        for observed in (graded, checked):
            assert [s["schedule"] for s in observed["steps"]] == want
            assert all(type(n) is int for s in observed["steps"] for _, n in s["schedule"])
            assert checkers.hygiene(workload, observed) == [] and checkers.differential(workload, observed) == []
            assert whitebox.invariants(workload, observed) == []
        assert got.trace is not None and "a count of schedule()'s dict is a Count; docs/api.md says int" in \
            got.trace.notes
    assert "a count of schedule()'s dict is a Count; docs/api.md says int" in factory.notes.values()
