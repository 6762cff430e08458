"""The stateful check in grading: the state machine's runs, recorded against the spec, are grading cases judged as
`check` judges the run its machine fails, so what the stateful check of `check --profile default` finds costs points.

- The recorded runs (conformance/grading/machine_runs.py) are the ones the machine makes now: a Hypothesis
  upgrade that changed its draws would change `check`, and this says to record them again.
- On every catalog mutant, grading's verdicts on those runs agree with the stateful check: it fails exactly when
  the check does, on a run whose finding has the check's rule and step (judged on in-process runs here; the
  sandbox reports the same traces, which the last test checks on one mutant).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters import Factory, load_target
from conformance.checks.checkers import Finding
from conformance.checks.machine import run_machine
from conformance.drivers import run_workload
from conformance.grading import machine_runs
from conformance.grading.calibrate import flatten
from conformance.grading.observe import Case, observed_trace, stateful
from conformance.grading.stateful import machine_cases, record, stages
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from conformance.sources import stateful_finding

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = sorted(p.stem for p in (ROOT / "conformance" / "mutants").glob("*.py")
                 if p.stem not in ("__init__", "__main__", "build", "plant", "shapes", "shim", "reference_scheduler")
                 and not p.stem.startswith("equivalent_"))
QUICK = ("budget_not_shared", "max_num_seqs_off_by_one", "preempt_clears_output")  # fails late, and passes
CASES = [Case(f"stateful/{i}", w, ("stateful",), machine_steps=n) for i, (w, n) in enumerate(machine_cases())]


def check_stateful(factory: Factory) -> Finding | None:
    """The stateful check as `check --profile default` runs it: the machine's stages in order, then the first
    failing run's workload judged by the driver (before shrinking)."""
    for examples, steps in stages():
        failing = run_machine(factory, examples, steps, True)
        if failing is not None:
            return stateful_finding(factory, True)(failing)
    return None


def graded(factory: Factory) -> list[Finding | None]:
    return [stateful(c, run_workload(c.workload, factory, white_box=True)) for c in CASES]


def test_the_recorded_runs_are_the_ones_the_machine_makes() -> None:
    assert stages() == machine_runs.STAGES, "the default profile's machine stages changed: record them again, " \
        "python -m conformance.grading.stateful"
    assert record() == machine_runs.RUNS, "the machine's draws changed: python -m conformance.grading.stateful"


@pytest.mark.parametrize("mutant", [pytest.param(m, marks=() if m in QUICK else pytest.mark.slow) for m in MUTANTS])
def test_grading_fails_the_runs_the_stateful_check_fails(mutant: str) -> None:
    factory = load_target(str(ROOT / "conformance" / "mutants" / f"{mutant}.py"))
    want = check_stateful(factory)
    got = [f for f in graded(factory) if f is not None]
    assert (want is None) == (not got), (want, got[:1])
    if want is not None:
        assert (got[0].check, got[0].rule, got[0].step) == ("stateful", want.rule, want.step), (want, got[0])


def test_impl_passes_every_run() -> None:
    assert graded(load_target("impl")) == [None] * len(CASES)


def test_the_sandbox_reports_what_the_driver_records(tmp_path: Path) -> None:
    path = tmp_path / "p07_scheduler.py"
    path.write_text(flatten("budget_not_shared"))  # the mutant as one self-contained file, as grading receives it
    result = run_in_sandbox(path, [c.workload for c in CASES], Limits(workload_seconds=5.0))
    sandboxed = [stateful(c, observed_trace(c.workload, r)) for c, r in zip(CASES, result.workloads, strict=True)]
    assert sandboxed == graded(load_target(str(ROOT / "conformance" / "mutants" / "budget_not_shared.py")))
    assert any(sandboxed)
