"""Schedulers made while others run: each scheduler of a group but the first is created just before its first request.

Every scheduler of a pair or group used to be made before any call, so what a new scheduler's __init__ resets in
shared state never met keys in use: arrival keys from a module-level clock each Scheduler() resets (unseen
hq_global_clock) passed every profile and graded 100. Quick's joining group makes one scheduler per step while the
first one's waiting queue grows by one to three requests a step (with one, each right after a reset, every key came
out alike and a stable insertion kept FCFS: unseen impl_reset_stamp_clock passed); `check` (interleave) and the
sandbox child (together) make them alike.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from conformance.adapters import CanonicalFactory
from conformance.checks.history import group_finding, interleave
from conformance.sandbox.child import together
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits, PlannedRun
from conformance.workloads import reach
from spec.trace import workload_to_json
from tests.conformance.unseen.planted import load_planted, source

ROOT = Path(__file__).resolve().parents[2]
LANES = reach.joining(reach.JOINING).workloads
UNSEEN_STYLES = ROOT / "tests/conformance/unseen_styles"
CORRECT = (ROOT / "conformance/selfcheck/styles/heap_queue.py", ROOT / "impl/scheduler.py",
           # state a module keeps rightly: a process-wide counter that only breaks ties, pure functions memoised
           UNSEEN_STYLES / "global_serial_heap.py", UNSEEN_STYLES / "pure_memo_tables.py")


def module_at(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_finds_a_clock_each_new_scheduler_resets_and_passes_the_file_it_was_planted_in(tmp_path):
    for name in ("hq_global_clock", "impl_reset_stamp_clock"):  # a heap keyed by the clock; stamped insertion
        found, lane = group_finding(list(LANES), CanonicalFactory(load_planted(name, tmp_path)))
        assert found is not None and found.rule == "H.instances" and lane == LANES[0], (name, found)
        # q2-0, keyed 0 by the clock scheduler 2 reset, passes q1-1, keyed 1 before it
        assert "its schedule() changed (from [['q1-1', 2]] to [['q2-0', 2]])" in found.message, found.message
    for correct in CORRECT:
        assert group_finding(list(LANES), CanonicalFactory(module_at(correct, correct.stem))) == (None, LANES[0])


def test_a_scheduler_is_made_just_before_its_first_request_in_check_and_in_the_sandbox_child():
    events: list[tuple[str, int]] = []  # ("create" | seq_id added, the instance's number in order of creation)
    impl = module_at(ROOT / "impl/scheduler.py", "impl_joining")

    class Logged(impl.Scheduler):  # type: ignore[name-defined,misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            self.number = sum(e == "create" for e, _ in events)
            events.append(("create", self.number))
            super().__init__(*args, **kwargs)

        def add(self, seq: object) -> None:
            events.append((seq.seq_id, self.number))  # type: ignore[attr-defined]
            super().add(seq)

    logged = ModuleType("logged")
    logged.Scheduler, logged.Sequence = Logged, impl.Sequence  # type: ignore[attr-defined]
    lanes = list(LANES[:4])
    in_check = interleave(lanes, CanonicalFactory(logged), 64)
    made_in_check = list(events)
    events.clear()
    in_child = together(logged, [workload_to_json(w) for w in lanes], 64)
    assert events == made_in_check
    # the first made before step 1, then its requests of step 1; before each later step one more scheduler, then
    # the first's requests of the step (one to three), then the new one's
    assert events[:4] == [("create", 0), ("q1-0", 0), ("q1-1", 0), ("create", 1)], events
    assert events[4:8] == [("q2-0", 0), ("q2-1", 0), ("q2-2", 0), ("a1", 1)], events
    assert events[8:11] == [("create", 2), ("q3-0", 0), ("a1", 2)], events
    for lane, (checked, child) in enumerate(zip(in_check, in_child, strict=True)):
        steps = [json.loads(s) for s in child["steps"]]
        first = 1 if lane == 0 else lane + 1  # late_lane(i)'s one request arrives at step i + 1
        assert [s["step"] for s in steps] == list(range(1, len(steps) + 1))
        assert all(s["added"] == [] and s["schedule"] == [] for s in steps[:first - 1])
        assert steps[first - 1]["added"] != [], (lane, steps[:first])
        assert [s["schedule"] for s in checked["steps"]] == [s["schedule"] for s in steps], lane


@pytest.mark.parametrize("name", ["hq_global_clock", *(f"correct:{p.stem}" for p in CORRECT)])
def test_the_sandbox_child_makes_the_joining_schedulers_as_check_does(name, tmp_path):
    path = tmp_path / f"{name.split(':')[-1]}.py"
    correct = {f"correct:{p.stem}": p for p in CORRECT}
    path.write_text(correct[name].read_text() if name in correct else source(name))
    group, alone = PlannedRun(LANES[0], group=LANES[1:]), PlannedRun(LANES[0], group=())
    result = run_in_sandbox(path, [group, alone], Limits(workload_seconds=5))
    together_run, alone_run = (r.trace for r in result.workloads)
    assert together_run is not None and alone_run is not None, result.causes()
    same = [s.get("schedule") for s in together_run.steps] == [s.get("schedule") for s in alone_run.steps]
    assert same == name.startswith("correct:"), (together_run.error, alone_run.error)


def test_a_scheduler_made_mid_run_that_raises_in_its_constructor_is_reported_at_its_step_not_as_malformed(tmp_path):
    """Its trace holds an empty record for each step before it was made: the error is at the step after them."""
    late = LANES[2].config  # the third scheduler of the group, made before step 3
    path = tmp_path / "raises.py"
    path.write_text((ROOT / "impl/scheduler.py").read_text().replace(
        "        self._batch: dict[str, int] | None = None\n",
        "        self._batch: dict[str, int] | None = None\n"
        f"        if (block_size, max_num_batched_tokens) == ({late.block_size}, {late.max_num_batched_tokens}):\n"
        "            raise RuntimeError('this config is refused')\n", 1))
    result = run_in_sandbox(path, [PlannedRun(LANES[0], group=LANES[1:])], Limits(workload_seconds=5))
    [run] = result.workloads
    assert run.status == "ok" and run.trace is not None, result.causes()
    third = run.group[1]
    assert third.status == "exception" and third.trace is not None, third.cause
    assert third.trace.error == {"step": 3, "call": "create", "kind": "RuntimeError",
                                 "message": "this config is refused"}
    assert len(third.trace.steps) == 2
    in_check = interleave(list(LANES[:3]), CanonicalFactory(module_at(path, "raises")), 64)
    assert in_check[2]["error"] == third.trace.error and len(in_check[2]["steps"]) == 2
