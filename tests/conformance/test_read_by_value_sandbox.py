"""The sandboxed grader reads by value too: the styles of test_read_by_value.py pass with the same notes, and the
hostile containers are findings that name the attribute, never a hang or a crash of the grader.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conformance.checks import whitebox
from conformance.grading.collect import Entry
from conformance.grading.judge import grade_one, run_workloads
from conformance.grading.observe import Case, Observations, judge_case, observed_trace
from conformance.grading.rubric import load_rubric
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits, PlannedRun
from spec.golden import golden_cases
from tests.conformance.test_read_by_value import (
    HOSTILE,
    HOSTILE_WORKLOAD,
    QUEUED,
    SEVERAL,
    SEVERAL_NOTES,
    STORED_GENERATOR,
    STYLES,
    WORKLOADS,
    write,
)

LIMITS = Limits(workload_seconds=5.0, workload_cpu_seconds=5, startup_seconds=10.0, run_seconds=60.0,
                cpu_seconds=30, memory_bytes=512 << 20, processes=16, output_bytes=1 << 20)
GOLDEN = {c.workload.name: c for c in golden_cases()}


@pytest.mark.parametrize("name", sorted(STYLES))
def test_the_grader_passes_a_correct_scheduler_in_another_container(name: str, tmp_path: Path) -> None:
    source, notes = STYLES[name]
    result = run_in_sandbox(write(tmp_path, name, source), WORKLOADS, LIMITS)
    assert [w.status for w in result.workloads] == ["ok"] * len(WORKLOADS), result.causes()
    for i, workload in enumerate(WORKLOADS):
        case = Case(f"w{i}", workload, (), GOLDEN.get(workload.name))
        verdicts = judge_case(case, observed_trace(workload, result.workloads[i]), None, None)
        assert all(v is None for v in verdicts.values()), (workload.name, verdicts)
    assert sorted(Observations(WORKLOADS, result.workloads).notes()) == sorted(notes)


def test_the_grader_shows_every_note_its_runs_gave_each_once(tmp_path: Path) -> None:
    """A black-box run (the fresh-dict probe's) reads no queue and no status, so its notes are fewer: the grade
    showed one run's notes, the first in sorted order, which was such a run's (from outside: 2 of a style's 6)."""
    path = write(tmp_path, "several", SEVERAL)
    runs = [*WORKLOADS, PlannedRun(WORKLOADS[0], "mutate")]
    result = run_in_sandbox(path, runs, LIMITS)
    assert [w.status for w in result.workloads] == ["ok"] * len(runs), result.causes()
    assert len(result.workloads[-1].trace.notes) < len(SEVERAL_NOTES), "the black-box run names fewer"
    assert sorted(Observations(run_workloads(runs), result.workloads).notes()) == sorted(SEVERAL_NOTES)


@pytest.mark.long
def test_running_in_a_deque_gets_a_full_grade_with_its_note(tmp_path: Path) -> None:
    """running kept in a deque (it once lost every golden case, "final outputs are {}", and scored 79.75)."""
    source, notes = STYLES["running_deque"]
    path = write(tmp_path, "running_deque", source)
    grade = grade_one(Entry("running_deque", path, path), dataclasses.replace(load_rubric(), explore=False))
    assert grade.score == 100, [(i.item.id, i.score, i.status, i.output) for i in grade.items]
    assert list(grade.notes) == notes


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_grader_names_a_hostile_container(name: str, tmp_path: Path) -> None:
    source, says, call = HOSTILE[name]
    result = run_in_sandbox(write(tmp_path, name, source), [HOSTILE_WORKLOAD], LIMITS)
    got = result.workloads[0]
    assert not got.hung and result.survivors == 0, got.cause
    observed = observed_trace(HOSTILE_WORKLOAD, got)
    if call == "update":  # update()'s result is read by the driver: the call's result is malformed
        assert got.status == "protocol" and says in got.cause, got.cause
        return
    assert observed["white_box_error"] is not None and says in observed["white_box_error"]["message"], observed
    finding = whitebox.invariants(HOSTILE_WORKLOAD, observed)
    assert finding and finding[0].rule == "I6" and says in finding[0].message, finding
    if call == "output":  # sample_fn reads it too, and stops the run there
        assert got.status == "protocol" and "cannot read sample_fn('a1'): seq.output" in got.cause, got.cause
    else:
        assert got.status == "ok", got.cause


def test_the_grader_fails_a_stored_one_shot_generator_on_behaviour(tmp_path: Path) -> None:
    result = run_in_sandbox(write(tmp_path, "stored_generator", STORED_GENERATOR), [QUEUED], LIMITS)
    got = result.workloads[0]
    assert got.status == "ok" and got.trace is not None, got.cause
    observed = observed_trace(QUEUED, got)
    assert observed["white_box_error"] is None  # it was read: empty
    finding = whitebox.invariants(QUEUED, observed)
    assert finding and "q2 disappeared from every queue" in finding[0].message, finding
    assert got.trace.notes == ("waiting is a generator; docs/api.md says deque",)
