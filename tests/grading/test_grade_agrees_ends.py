"""Runs that never finish end where `check` ends them, in the sandbox as in process, with the same findings.

A run of `check` stops at its liveness bound, at a step cap far past the spec's last step when that bound is
too large to run to (prompts near 2**53), or after STALL_STEPS empty batches with every request arrived
(spec/loop.py). The sandbox child runs to the same caps: before, it ran to the liveness bound plus a margin, so a
scheduler that clamps its budget to an int32 reported steps up to the report's 2 MB cap on every such workload,
and the grader read and judged all of them (tens of seconds for one submission), and named another finding.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance import drivers
from conformance.adapters import load_target
from conformance.checks.workload import check_workload
from conformance.grading.observe import Case, judge_case, observed_trace
from conformance.sandbox.run import prepare, run_in_sandbox
from conformance.sandbox.types import Limits
from spec.feasible import liveness_bound
from spec.loop import STALL_STEPS
from spec.model import Config
from spec.trace import Request, make_workload

IMPL = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"
FAULTS = {
    # the kernel's batch size is an int32: 2**45 prompt tokens then take 2**14 steps, not one
    "int32_budget": """
        class Scheduler(Base):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.max_num_batched_tokens = min(self.max_num_batched_tokens, 2**31 - 1)
        """,
    # gives up after its first batch: every later one is empty
    "gives_up": """
        class Scheduler(Base):
            calls = 0

            def schedule(self):
                self.calls += 1
                return super().schedule() if self.calls == 1 else {}

            def update(self):
                return super().update() if self.calls == 1 else []
        """,
}
HUGE = make_workload(Config(num_blocks=2**30, block_size=2**16, max_num_seqs=4, max_num_batched_tokens=2**46),
                     [Request("a", 2**45, 3), Request("b", 5, 2)])
SMALL = make_workload(Config(num_blocks=8, block_size=2, max_num_seqs=2, max_num_batched_tokens=4),
                      [Request("a", 6, 4), Request("b", 3, 3, arrival=2)])
CHECKS = ("differential", "invariants", "liveness", "hygiene")


def standalone(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name / "p07_scheduler.py"
    path.parent.mkdir()
    path.write_text(IMPL.read_text() + "\n\nBase = Scheduler\n\n" + textwrap.dedent(FAULTS[name]))
    return path


def test_the_caps_are_the_drivers():
    assert liveness_bound(HUGE.requests) > drivers.STEP_CAP
    assert prepare(HUGE)[2] == drivers.run_cap(HUGE) < liveness_bound(HUGE.requests)
    assert prepare(SMALL)[2] == drivers.run_cap(SMALL) == liveness_bound(SMALL.requests)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_run_that_does_not_finish_ends_at_the_same_step_with_the_same_findings(tmp_path: Path, name: str) -> None:
    path = standalone(tmp_path, name)
    result = run_in_sandbox(path, [HUGE, SMALL], Limits(workload_seconds=20.0))
    factory = load_target(str(path))
    for w, r in zip((HUGE, SMALL), result.workloads, strict=True):
        checked_run = drivers.run_workload(w, factory)
        graded_run = observed_trace(w, r)
        assert len(graded_run["steps"]) == len(checked_run["steps"]) <= drivers.run_cap(w), (name, w.name, r.cause)
        assert (graded_run["stop"], graded_run["error"]) == (checked_run["stop"], checked_run["error"]), r.cause
        graded = judge_case(Case("w", w, ()), graded_run, None, None)
        checked = check_workload(w, factory, only=CHECKS, extra_probes=False)
        assert {c: graded[c] for c in CHECKS} == checked, (name, w.name)
    ends = [observed_trace(w, r) for w, r in zip((HUGE, SMALL), result.workloads, strict=True)]
    if name == "int32_budget":  # the huge prompt stops at the step cap, a hang; the small workload passes
        assert ends[0]["error"]["message"].startswith(drivers.STEP_CAPPED) and ends[1]["stop"] == "done"
    else:  # the huge one stops after STALL_STEPS empty batches, not at its report's 2 MB cap; the small one at
        # its liveness bound, which comes first
        assert ends[0]["stop"] == ends[1]["stop"] == "bound"
        assert len(ends[0]["steps"]) == 1 + STALL_STEPS and not any(s["schedule"] for s in ends[0]["steps"][1:])
        assert len(ends[1]["steps"]) == liveness_bound(SMALL.requests) < STALL_STEPS


def test_the_docs_state_the_stop_rules_the_code_has():
    """docs/sandbox.md and docs/trace-format.md give the stall and the cap in numbers: these numbers."""
    root = Path(__file__).resolve().parents[2]
    sandbox = " ".join((root / "docs" / "sandbox.md").read_text().split())
    trace_format = " ".join((root / "docs" / "trace-format.md").read_text().split())
    assert f"after {STALL_STEPS} empty batches in a row with every request arrived" in sandbox
    assert f"{drivers.STEP_CAP:,} steps past twice the spec's own length" in sandbox
    assert f"after {STALL_STEPS} empty steps with everything arrived" in trace_format
