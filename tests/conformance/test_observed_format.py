"""Every driver records the one observed-trace format of docs/trace-format.md, checked against its JSON Schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from conformance.adapters import SpecAdapter, load_target
from conformance.checks.history import interleave, other_workload
from conformance.drivers import run_workload
from conformance.grading.observe import observed_trace
from conformance.observed import Observed, ObservedError, json_schema
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from spec.golden import golden_cases

ROOT = Path(__file__).resolve().parents[2]
RAISES = ("class Scheduler(Scheduler):\n    def update(self):\n        if self.running:\n"
          "            raise ZeroDivisionError('x')\n        return super().update()\n")


SHIPPED = ROOT / "conformance" / "schemas" / "observed.schema.json"


def schema() -> dict:
    found = json.loads(SHIPPED.read_text())
    jsonschema.Draft202012Validator.check_schema(found)
    assert found == json_schema(), "run `python -m conformance.observed > conformance/schemas/observed.schema.json`"
    return found


VALIDATOR = jsonschema.Draft202012Validator(schema())
WORKLOADS = [c.workload for c in golden_cases()]


def valid(observed: dict) -> None:
    """The trace fits the schema, and reads back into the classes it was made from, to the same JSON."""
    errors = sorted(VALIDATOR.iter_errors(observed), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:3]]
    assert Observed.from_json(observed).to_json() == observed


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
        with pytest.raises(ObservedError):
            Observed.from_json(bad)


@pytest.mark.parametrize(("change", "said"), [
    (lambda o: o["steps"][0].update(step=0), "$.steps[0].step must be at least 1, got 0"),
    (lambda o: o["steps"][0].update(schedule=[["a1", "2"]]), "$.steps[0].schedule[0][1] must be an integer, got '2'"),
    (lambda o: o["steps"][0]["after_update"].pop("running"), "$.steps[0].after_update.running is missing"),
    (lambda o: o.update(stop="finished"), "$.stop must be one of 'done', 'bound', 'error', got 'finished'"),
    (lambda o: o.update(version=2), "$.version must be 1, got 2"),
    (lambda o: o["workload"].pop("sample"), "$.workload.sample is missing"),
    (lambda o: next(iter(o["steps"][0]["after_schedule"]["seqs"].values())).update(num_blocks=True),
     "].num_blocks must be an integer, got True"),
])
def test_a_trace_read_back_names_the_field_and_the_value_that_are_wrong(change, said):
    observed = json.loads(json.dumps(run_workload(WORKLOADS[0], load_target("impl"))))
    change(observed)
    with pytest.raises(ObservedError) as e:
        Observed.from_json(observed)
    assert said in str(e.value)
    assert list(VALIDATOR.iter_errors(observed)), "the schema refuses it too"
