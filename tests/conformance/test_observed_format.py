"""Every driver records the one observed-trace format of docs/trace-format.md, checked against its JSON Schema."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import jsonschema
import pytest

from conformance.adapters import SpecAdapter, load_target
from conformance.checks.history import interleave, other_workload
from conformance.drivers import run_workload
from conformance.grading.observe import observed_trace
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from spec.golden import golden_cases

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "trace-format.md"
RAISES = ("class Scheduler(Scheduler):\n    def update(self):\n        if self.running:\n"
          "            raise ZeroDivisionError('x')\n        return super().update()\n")


def schema() -> dict:
    block = re.search(r"```json observed-schema\n(.*?)\n```", DOC.read_text(), re.S)
    assert block, "docs/trace-format.md has no ```json observed-schema block"
    found = json.loads(block.group(1))
    jsonschema.Draft202012Validator.check_schema(found)
    return found


VALIDATOR = jsonschema.Draft202012Validator(schema())
WORKLOADS = [c.workload for c in golden_cases()]


def valid(observed: dict) -> None:
    errors = sorted(VALIDATOR.iter_errors(observed), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:3]]


def raising_submission(tmp_path: Path) -> Path:
    path = tmp_path / "raises.py"
    path.write_text((ROOT / "impl" / "scheduler.py").read_text() + "\n\n" + RAISES)
    return path


@pytest.mark.parametrize("white_box", [True, False])
def test_in_process_traces_match_the_schema(white_box, tmp_path):
    for factory in (load_target("impl"), SpecAdapter, load_target(str(raising_submission(tmp_path))),
                    load_target("conformance/mutants/preempt_to_tail.py")):
        for w in WORKLOADS:
            valid(run_workload(w, factory, white_box=white_box))


def test_interleaved_and_wire_traces_match_the_schema():
    w = WORKLOADS[0]
    for observed in interleave([w, other_workload(w)], load_target("impl"), 64):
        valid(observed)
    wire = load_target(f"{sys.executable} {ROOT / 'examples' / 'wire' / 'scheduler.py'}", "conformance.wire")
    valid(run_workload(w, wire))


def test_sandboxed_traces_are_the_same_observed_traces(tmp_path):
    """The child's report, rebuilt by the parent, is the in-process trace of the same run, field for field."""
    for path in (ROOT / "impl" / "scheduler.py", raising_submission(tmp_path)):
        result = run_in_sandbox(path, WORKLOADS, Limits())
        in_process = load_target(str(path))
        for w, r in zip(WORKLOADS, result.workloads, strict=True):
            got = observed_trace(w, r)
            valid(got)
            want = run_workload(w, in_process)
            assert got["steps"] == want["steps"] and got["stop"] == want["stop"], w.name
            assert (got["error"] is None) == (want["error"] is None), w.name
            if want["error"] is not None:
                assert {k: got["error"][k] for k in ("step", "call", "kind")} == \
                    {k: want["error"][k] for k in ("step", "call", "kind")}


def test_the_schema_refuses_the_old_dialects():
    good = run_workload(WORKLOADS[0], load_target("impl"))
    valid(good)
    for bad in ({**good, "end": "finished"}, {k: v for k, v in good.items() if k != "stop"},
                {**good, "steps": [{**good["steps"][0], "sample_calls": [["a1", 0]]}]},
                {**good, "steps": [{**good["steps"][0], "sampled": [["a1", 0]]}]},
                {**good, "error": {"kind": "exception", "exc_type": "ValueError", "step": 1, "call": "schedule",
                                   "message": "x"}}):
        assert list(VALIDATOR.iter_errors(bad)), bad.keys()
