"""A queue of another container type than docs/api.md's is read by value: a note, never a finding.

The campaign's three misses (conformance/selfcheck/misses.py, made here from their style file and
mutation id) each hand out a queue of another type than docs/api.md names: running as the internal
deque, running as the internal tuple, waiting as a fresh generator on every read. Each behaves as
its style file does, so `check` and the sandboxed grader must both pass it and name the type in a
note. Both must still read a returned dict by its real items, whatever its own methods claim.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.checks import checkers, whitebox
from conformance.checks.workload import check_workload
from conformance.grading.observe import Observations, observed_trace
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from conformance.selfcheck import misses
from spec.model import Config
from spec.trace import Request, make_workload
from tests.grading.attacks.recipes import attack_source

REPO = Path(__file__).resolve().parents[2]
CASES = {"dict_of_deques__68_15_unwrap.py": "running is a deque; docs/api.md says list",
         "functional_copy__79_15_unwrap.py": "running is a tuple; docs/api.md says list",
         "heap_queue__65_15_unwrap.py": "waiting is a generator; docs/api.md says deque"}
WORKLOAD = make_workload(Config(4, 2, 2, 4), [Request("a1", 3, 2), Request("a2", 2, 2, arrival=2)])
LIMITS = Limits(workload_seconds=5.0, workload_cpu_seconds=5, startup_seconds=10.0, run_seconds=30.0,
                cpu_seconds=20, memory_bytes=512 << 20, processes=16, output_bytes=1 << 20)


@pytest.fixture(scope="module")
def missed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("missed")
    assert sorted(p.name for p in misses.write(folder)) == sorted(CASES)
    return folder


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_passes_the_queue_and_notes_its_type(name, missed):
    factory = load_target(str(missed / name))
    found = check_workload(WORKLOAD, factory)
    assert all(f is None for f in found.values()), found
    assert list(factory.notes.values()) == [CASES[name]]  # once, though every call read it


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_grader_passes_it_too_and_notes_its_type(name, missed, tmp_path):
    sub = tmp_path / "p07_scheduler.py"
    sub.write_text((missed / name).read_text())
    result = run_in_sandbox(sub, [WORKLOAD, WORKLOAD], LIMITS)
    assert [w.status for w in result.workloads] == ["ok", "ok"], result.causes()
    observed = observed_trace(WORKLOAD, result.workloads[0])
    assert observed["white_box_error"] is None and observed["note"] is None
    assert whitebox.invariants(WORKLOAD, observed) == [] and checkers.differential(WORKLOAD, observed) == []
    assert [w.trace.notes for w in result.workloads] == [(CASES[name],)] * 2  # each trace carries its own notes
    assert Observations([WORKLOAD, WORKLOAD], result.workloads).notes() == [CASES[name]]


def test_a_dict_that_lies_through_its_methods_is_read_by_its_real_items(tmp_path):
    liar = tmp_path / "p07_scheduler.py"
    liar.write_text(attack_source(REPO / "tests" / "grading" / "attacks" / "submissions" / "crash_dict_liar.py"))
    factory = load_target(str(liar))
    found = check_workload(WORKLOAD, factory)
    assert all(f is None for f in found.values()), found
    assert list(factory.notes.values()) == ["schedule()'s result is a _Liar (a dict subclass, read by its dict items); "
                                            "docs/api.md says dict"]
