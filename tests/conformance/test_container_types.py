"""docs/api.md fixes the types of the white-box queues and of what schedule() and update() return.

The campaign's three real misses (conformance/selfcheck/misses.py, made here from their style file
and mutation id) once passed every profile: each is an
independently written correct scheduler with one change that hands out a queue of the wrong type
(running as a deque or a tuple, waiting as a one-shot generator). `check` and the sandboxed grader
must both name the queue and its type, as an I6 finding; and both must read a returned dict by its
real items, whatever its own methods claim.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.checks.workload import check_workload
from conformance.grading.observe import observed_trace
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from conformance.selfcheck import misses
from spec.model import Config
from spec.trace import Request, make_workload
from tests.grading.attacks.recipes import attack_source

REPO = Path(__file__).resolve().parents[2]
CASES = {"dict_of_deques__68_15_unwrap.py": "running must be a list (docs/api.md), got deque",
         "functional_copy__79_15_unwrap.py": "running must be a list (docs/api.md), got tuple",
         "heap_queue__65_15_unwrap.py": "waiting must be a deque (docs/api.md), got generator"}
WORKLOAD = make_workload(Config(4, 2, 2, 4), [Request("a1", 3, 2), Request("a2", 2, 2, arrival=2)])
LIMITS = Limits(workload_seconds=5.0, workload_cpu_seconds=5, startup_seconds=10.0, run_seconds=30.0,
                cpu_seconds=20, memory_bytes=512 << 20, processes=16, output_bytes=1 << 20)


@pytest.fixture(scope="module")
def missed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("missed")
    assert sorted(p.name for p in misses.write(folder)) == sorted(CASES)
    return folder


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_names_the_mistyped_queue(name, missed):
    found = check_workload(WORKLOAD, load_target(str(missed / name)), only=("invariants", "differential"))
    assert found["differential"] is None  # the scheduling itself is right: only the type is wrong
    finding = found["invariants"]
    assert finding is not None and finding.rule == "I6" and CASES[name] in finding.message


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_grader_names_the_mistyped_queue_too(name, missed, tmp_path):
    sub = tmp_path / "p07_scheduler.py"
    sub.write_text((missed / name).read_text())
    result = run_in_sandbox(sub, [WORKLOAD], LIMITS)
    observed = observed_trace(WORKLOAD, result.workloads[0])
    assert observed["white_box_error"] is not None and CASES[name] in observed["white_box_error"]["message"]
    assert observed["note"] is None  # a finding, not "white-box checks skipped"


def test_a_dict_that_lies_through_its_methods_is_read_by_its_real_items(tmp_path):
    liar = tmp_path / "p07_scheduler.py"
    liar.write_text(attack_source(REPO / "tests" / "grading" / "attacks" / "submissions" / "crash_dict_liar.py"))
    found = check_workload(WORKLOAD, load_target(str(liar)))
    assert all(f is None for f in found.values()), found
