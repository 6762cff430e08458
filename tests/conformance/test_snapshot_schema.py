"""The snapshot JSON Schema of docs/adapters.md: every snapshot the spec makes fits it, and broken ones do not."""

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from conformance.adapters import SpecAdapter
from conformance.drivers import run_workload
from conformance.workloads.corpus import load_corpus

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "conformance/schemas/snapshot.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def spec_snapshots(count=60):
    vectors, _ = load_corpus(families=["exhaustive", "edge"])
    for v in vectors[:count]:
        observed = run_workload(v.workload, SpecAdapter, white_box=True)
        for step in observed["steps"]:
            for key in ("after_schedule", "after_update"):
                if step.get(key) is not None:
                    yield step[key]


def test_the_schema_is_a_valid_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_snapshot_of_the_spec_fits_the_schema():
    seen = 0
    for snap in spec_snapshots():
        VALIDATOR.validate(snap)
        seen += 1
    assert seen > 100


@pytest.mark.parametrize("break_it", [
    lambda s: s.pop("blocks_used"),
    lambda s: s.update(num_preemptions=-1),
    lambda s: s.update(waiting=["a1", "a1"]),
    lambda s: s["seqs"][next(iter(s["seqs"]))].update(status="PREEMPTED"),
    lambda s: s["seqs"][next(iter(s["seqs"]))].update(num_blocks=1.5),
    lambda s: s["seqs"][next(iter(s["seqs"]))].pop("output"),
    lambda s: s.update(extra=1),
])
def test_a_broken_snapshot_does_not_fit(break_it):
    snap = copy.deepcopy(next(s for s in spec_snapshots() if s["seqs"]))
    break_it(snap)
    assert not VALIDATOR.is_valid(snap)
