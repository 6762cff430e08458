"""What an engine adapter's explain reads (conformance/capabilities.py Difference): the workload run again on
instances that keep what the engine held before each step, and that record at a given step."""

from __future__ import annotations

from typing import Any

from conformance.adapters import Factory
from conformance.drivers import run_workload
from spec.model import Config, Sample
from spec.trace import Workload


def run_recording(factory: Factory, workload: Workload) -> tuple[dict[str, Any], list[Any]]:
    """The observed run, black box, and the instances it made, each with ``recording`` set before its first call:
    an adapter that honours it appends what its engine holds before each schedule() to its ``before`` list."""
    made: list[Any] = []

    def recording(config: Config, sample: Sample) -> Any:
        sut: Any = factory(config, sample)
        sut.recording = True
        made.append(sut)
        return sut
    return run_workload(workload, recording, white_box=False), made


def held_at(before: list[dict[str, Any]], observed: dict[str, Any], step: int) -> dict[str, Any] | None:
    """The record of the schedule() of `step` (idle steps never reach an engine that does not take them: its
    capabilities), None when the run never got there."""
    calls = sum(1 for s in observed["steps"][:step] if not s.get("idle"))
    return before[calls - 1] if 0 < calls <= len(before) else None
