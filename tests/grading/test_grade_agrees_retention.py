"""Retention in grading: the sandbox child keeps every returned value and reports what the end of the run showed;
the grader judges that report with `check`'s judge, so both make the same H.retained and H.aliased finding.

- Each retention fault of tests/conformance/test_history_probes.py, and a dict pool, made self-contained: the
  finding `check` makes in process equals the one grading makes from the sandbox's report, field by field.
- The parent refuses a report that breaks the message's shape (docs/sandbox.md, "Messages"): wrong types, a
  step outside the run, an unknown kind, fields of another kind, values that are not plain or not bounded,
  more items than the child sends, a report for a run that did not end "done", a second instance's trace on a
  workload that is not a two-instance probe.
"""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import load_target
from conformance.checks.workload import check_workload
from conformance.grading.observe import Case, judge_case, observed_trace
from conformance.sandbox import protocol, record
from conformance.sandbox.child import drive, trace_line
from conformance.sandbox.protocol import Malformed
from conformance.sandbox.run import prepare, run_in_sandbox
from conformance.sandbox.types import Limits
from spec.golden import case_named
from spec.trace import workload_to_json
from tests.conformance.test_history_probes import FAULTS

IMPL = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"
POOL = """
    class Scheduler(Base):
        def schedule(self):
            got = super().schedule()
            if not hasattr(self, "pool"):
                self.pool, self.turn = [{}, {}, {}], 0
            out = self.pool[self.turn % 3]
            self.turn += 1
            out.clear()
            out.update(got)
            return out
    """
SOURCES = {**{name: FAULTS[name] for name in ("reuses_update_list", "reuses_update_deque", "writes_returned_dict",
                                              "returns_copies", "resets_finished")}, "dict_pool": POOL}
WORKLOADS = [case_named(name).workload for name in ("example1", "self_preemption")]


def standalone(tmp_path: Path, name: str) -> Path:
    """impl/scheduler.py with the fault's Scheduler after it: one file, as the sandbox runs it."""
    path = tmp_path / name / "p07_scheduler.py"
    path.parent.mkdir()
    path.write_text(IMPL.read_text() + "\n\nBase = Scheduler\n\n" + textwrap.dedent(SOURCES[name]))
    return path


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_check_and_grade_make_the_same_retention_finding(tmp_path: Path, name: str) -> None:
    path = standalone(tmp_path, name)
    factory = load_target(str(path))
    result = run_in_sandbox(path, WORKLOADS, Limits(workload_seconds=5.0))
    found = []
    for w, r in zip(WORKLOADS, result.workloads, strict=True):
        assert r.status == "ok" and r.trace is not None and r.trace.kept is not None, r.cause
        graded = judge_case(Case("w", w, ()), observed_trace(w, r), None, None, r.trace.kept)["hygiene"]
        checked = check_workload(w, factory, only=("hygiene",), extra_probes=False)["hygiene"]
        assert graded == checked, (w.name, graded, checked)
        found.append(graded)
    assert any(f is not None and f.rule in ("H.retained", "H.aliased") for f in found), found


def test_impl_reports_nothing_kept_and_passes() -> None:
    result = run_in_sandbox(IMPL, WORKLOADS, Limits(workload_seconds=5.0))
    assert [r.trace.kept if r.trace else None for r in result.workloads] == [(), ()]


# --- the parent's reading ----------------------------------------------------------------------------------------

W = case_named("example1").workload
DATA = workload_to_json(W)
CAP = prepare(W)[2]


def genuine(kept: list[dict[str, Any]]) -> dict[str, Any]:
    """impl's trace message of example1 (white box), with `kept` in place of its report."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("impl_for_kept", IMPL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    message: dict[str, Any] = json.loads(trace_line(0, drive(module, DATA, CAP), []))
    assert message["kept"] == []
    return {**message, "kept": kept}


CHANGED = {"step": 1, "call": "schedule", "kind": "changed", "then": [["a1", 6]], "now": []}
GOOD = [CHANGED, {"step": 2, "call": "schedule", "kind": "aliased", "earlier": [1, "schedule"]},
        {"step": 2, "call": "update", "kind": "replaced", "seq": "a3"},
        {"step": 2, "call": "update", "kind": "field", "seq": "a3", "field": "status", "then": "FINISHED",
         "now": "<Other object>"}]
BAD = {
    "not a list": {"kept": {"0": CHANGED}},
    "too many": {"kept": [CHANGED] * 5},
    "step past the run": {"kept": [{**CHANGED, "step": 4}]},
    "step 0": {"kept": [{**CHANGED, "step": 0}]},
    "a bool step": {"kept": [{**CHANGED, "step": True}]},
    "unknown call": {"kept": [{**CHANGED, "call": "add"}]},
    "unknown kind": {"kept": [{**CHANGED, "kind": "lost"}]},
    "another kind's field": {"kept": [{**CHANGED, "seq": "a1"}]},
    "a missing field": {"kept": [{k: v for k, v in CHANGED.items() if k != "now"}]},
    "a float": {"kept": [{**CHANGED, "now": [["a1", 6.0]]}]},
    "too deep": {"kept": [{**CHANGED, "now": [[["a1"]]]}]},
    "too long": {"kept": [{**CHANGED, "now": list(range(66))}]},
    "an int out of range": {"kept": [{**CHANGED, "now": [1 << 130]}]},
    "a later earlier": {"kept": [{**GOOD[1], "earlier": [3, "schedule"]}]},
    "a Sequence from schedule": {"kept": [{**GOOD[2], "call": "schedule"}]},
    "an unknown field": {"kept": [{**GOOD[3], "field": "seq_id"}]},
}


def test_the_parent_reads_every_kind_of_report() -> None:
    decoded = protocol.trace(genuine(GOOD), DATA, CAP, True)
    assert decoded.kept is not None and [k.kind for k in decoded.kept] == ["changed", "aliased", "replaced", "field"]
    assert decoded.kept[1].earlier == (1, "schedule")


@pytest.mark.parametrize("why", sorted(BAD))
def test_the_parent_refuses_a_report_out_of_shape(why: str) -> None:
    with pytest.raises(Malformed):
        protocol.trace({**genuine([]), **BAD[why]}, DATA, CAP, True)


def test_a_report_is_refused_for_a_run_that_did_not_end_done_and_a_second_trace_outside_a_probe() -> None:
    message = genuine([])
    stopped = copy.deepcopy(message)
    stopped["steps"] = stopped["steps"][:1]
    stopped.update(stop="error", error={"step": 2, "call": "schedule", "kind": "ValueError", "message": "x"})
    protocol.trace({k: v for k, v in stopped.items() if k != "kept"}, DATA, CAP, True)  # fine without a report
    with pytest.raises(Malformed, match="only for a run that ended 'done'"):
        protocol.trace(stopped, DATA, CAP, True)
    run = record.Run(None, Limits(), [prepare(W)])  # type: ignore[arg-type]
    with pytest.raises(Malformed, match="only for a two-instance probe"):
        record.read_trace(run, 0, {**message, "beside": {"steps": [], "stop": "done", "error": None}})
