"""The parent's validation of child messages: a forged or malformed report is never accepted.

These run without a child: a real trace message is produced in-process by the child's own driver on
the correct scheduler, then altered one field at a time.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from conformance.sandbox import protocol
from conformance.sandbox.child import drive, trace_line
from spec.feasible import liveness_bound
from spec.loop import RESAMPLE_SHIFT
from spec.model import Config
from spec.trace import Request, make_workload, run_workload, snapshot_to_json, workload_to_json

CORRECT = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"
WORKLOAD = make_workload(Config(3, 2, 8, 64), [Request("a1", 2, 3), Request("a2", 2, 3, arrival=2)])
DATA = workload_to_json(WORKLOAD)
CAP = liveness_bound(WORKLOAD.requests) + 16


def correct_module() -> Any:
    spec = importlib.util.spec_from_file_location("correct_for_protocol_tests", CORRECT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENUINE: dict[str, Any] = json.loads(trace_line(0, drive(correct_module(), DATA, CAP), []))


def test_genuine_trace_is_accepted_and_is_the_reference_models_observed_trace() -> None:
    decoded = protocol.trace(GENUINE, DATA, CAP, white_box=True)
    assert (decoded.stop, decoded.error, decoded.note, decoded.white_box_error) == ("done", None, None, None)
    spec = run_workload(WORKLOAD).steps
    assert len(decoded.steps) == len(spec)
    for got, want in zip(decoded.steps, spec, strict=True):
        assert got == {"step": want.step, "added": list(want.added), "schedule": [list(p) for p in want.batch],
                       "after_schedule": snapshot_to_json(want.after_schedule),
                       "sampled": [[i, k, tok] for (i, tok), k in zip(want.sampled, _lengths(want), strict=True)],
                       "finished": list(want.finished), "after_update": snapshot_to_json(want.after_update)}


def _lengths(step: Any) -> list[int]:
    """len(output) at each of the step's sample calls, read off the state before update()."""
    return [len(step.after_schedule.find(seq_id).output) for seq_id, _ in step.sampled]


def test_unchanged_queues_and_output_prefixes_are_sent_as_changes() -> None:
    """The child sends a queue only when it changed and an output as kept prefix + tail (the test above shows
    the parent rebuilds both whole)."""
    sent = [s[k] for s in GENUINE["steps"] for k in ("after_schedule", "after_update")]
    assert any(s["same"] for s in sent), "the workload never repeats a queue: pick one that does"
    assert any(row[5] for s in sent for row in s["seqs"].values()), "no output was sent as a tail"


def test_a_row_sent_again_unchanged_rebuilds_nothing() -> None:
    """The child sends a row only when it changed; one sent again as it was keeps the snapshot's sequences the same
    object as before, so a forged report that resends rows each call costs the parent no more than the genuine one
    (a stalled crowd of 4,097 that resent one row a call took 81.6 s of the parent's CPU to read and judge)."""
    genuine = protocol.trace(GENUINE, DATA, CAP, white_box=True).steps
    order = [(i, key) for i in range(len(genuine)) for key in ("after_schedule", "after_update")]
    n = next(n for n in range(1, len(order)) if not GENUINE["steps"][order[n][0]][order[n][1]]["seqs"])
    (i, key), (j, key_before) = order[n], order[n - 1]
    seq_id, row = next(iter(genuine[j][key_before]["seqs"].items()))
    message = copy.deepcopy(GENUINE)
    message["steps"][i][key]["seqs"][seq_id] = [row["num_computed"], row["num_tokens"], row["num_blocks"],
                                                row["status"], [], len(row["output"])]
    steps = protocol.trace(message, DATA, CAP, white_box=True).steps
    assert steps == genuine
    assert steps[i][key]["seqs"] is steps[j][key_before]["seqs"]


def unchanged(message: dict[str, Any]) -> dict[str, Any]:
    """The first snapshot that sends no queue (every one as before)."""
    return next(snap for s in message["steps"] for snap in (s["after_schedule"], s["after_update"])
                if snap.get("same") == ["waiting", "running", "finished"])


def forged(edit: Any) -> dict[str, Any]:
    message = copy.deepcopy(GENUINE)
    edit(message)
    return message


@pytest.mark.parametrize(("edit", "words"), [
    (lambda m: m["steps"][0]["schedule"][0].__setitem__(1, True), "expected [seq_id, int]"),
    (lambda m: m["steps"][0]["schedule"][0].__setitem__(1, 1 << 128), "expected [seq_id, int]"),
    (lambda m: m["steps"][0]["schedule"][0].__setitem__(0, 7), "expected [seq_id, int]"),
    (lambda m: m["steps"][0]["schedule"].append(["a1", 1]), "names a seq_id twice"),
    (lambda m: m["steps"][0].__setitem__("added", []), "the workload adds ['a1']"),
    (lambda m: m["steps"][0].__setitem__("step", 2), "step == 1"),
    (lambda m: m["steps"].pop(), "not every request was added and reported finished"),
    (lambda m: m.__setitem__("steps", m["steps"] * 4), "step == "),
    (lambda m: m.__setitem__("stop", "bound"), "the cap is"),
    (lambda m: m.__setitem__("stop", "passed"), "expected 'done'"),
    (lambda m: m["steps"][0]["sampled"].append(["a1", -1, 99]), "int >= 0"),
    (lambda m: m["steps"][0]["sampled"][0].__setitem__(2, 7), "is not the model's"),
    (lambda m: m["steps"][0].pop("finished"), "is incomplete"),
    (lambda m: m["steps"][0]["after_update"].__setitem__("blocks_used", "2"), "must be int"),
    (lambda m: m["steps"][0]["after_update"]["seqs"]["a1"].__setitem__(0, 1 << 130), "where an int or null belongs"),
    (lambda m: m["steps"][0]["after_schedule"].__setitem__("seqs", {}), "without its first row"),
    (lambda m: m.__setitem__("error", {"kind": "bad_result"}), "not every request"),
    (lambda m: m["steps"][0]["after_schedule"].__setitem__("same", ["waiting"]), "queues sent before and not sent now"),
    (lambda m: m["steps"][0]["after_update"].__setitem__("same", ["nowhere"]), "queues sent before"),
    (lambda m: (m["steps"][0]["after_schedule"].pop("running"), m["steps"][0]["after_schedule"].__setitem__(
        "same", ["running"])), "queues sent before and not sent now"),
    (lambda m: m["steps"][0]["after_update"]["seqs"]["a1"].__setitem__(5, 9), "kept must count tokens"),
    (lambda m: m["steps"][0]["after_update"]["seqs"]["a1"].pop(), "a list of 6 fields"),
    # the usual cases are decided by a shorter path: what it lets through must be exactly what the long one does
    (lambda m: unchanged(m).__setitem__("waiting", []), "queues sent before and not sent now"),
    (lambda m: m["steps"][0].__setitem__("step", True), "must be int, got bool"),
    (lambda m: m["steps"][0]["after_update"].__setitem__("blocks_used", None), "must be int, got NoneType"),
    (lambda m: m["steps"][0]["after_update"].__setitem__("num_preemptions", False), "must be int, got bool"),
    (lambda m: m["steps"][0]["after_update"].__setitem__("num_preemptions", -(1 << 128)), "out of range"),
    (lambda m: m["steps"][1].__setitem__("added", ["a1"]), "which is not an added seq_id"),
])
def test_forged_or_malformed_trace_is_rejected(edit: Any, words: str) -> None:
    with pytest.raises(protocol.Malformed) as caught:
        protocol.trace(forged(edit), DATA, CAP, white_box=True)
    assert words in str(caught.value)


def test_error_record_must_name_a_known_call_at_the_right_step() -> None:
    message = {"type": "trace", "workload": 0, "steps": [], "stop": "error",
               "error": {"kind": "ValueError", "step": 1, "call": "schedule", "message": "x"}}
    decoded = protocol.trace(message, DATA, CAP, white_box=True)
    assert decoded.stop == "error" and decoded.error == message["error"]
    adding = {**message, "error": {**message["error"], "call": "add('a1')"}}
    assert protocol.trace(adding, DATA, CAP, white_box=True).error["call"] == "add('a1')"
    for bad in ({"call": "os.system"}, {"call": "add('ghost')"}, {"step": 5}, {"kind": 3}, {"message": 3}):
        with pytest.raises(protocol.Malformed):
            protocol.trace({**message, "error": {**message["error"], **bad}}, DATA, CAP, white_box=True)


def test_a_time_out_told_by_the_child_is_an_exception_it_raised() -> None:
    """Only the parent's limits make a time-out (which makes a comparison of instances inconclusive): a child's
    report of one, forged or from an exception class of that name, is kept as raised."""
    message = {"type": "trace", "workload": 0, "steps": [], "stop": "error",
               "error": {"kind": "CallTimeout", "step": 1, "call": "schedule", "message": "x"}}
    assert protocol.trace(message, DATA, CAP, white_box=True).error["kind"] == "CallTimeout (raised)"


def test_the_step_whose_call_failed_is_reported_with_what_its_calls_returned() -> None:
    steps = copy.deepcopy(GENUINE["steps"][:2])
    for key in ("sampled", "finished", "after_update"):
        steps[1].pop(key)
    message = {"type": "trace", "workload": 0, "steps": steps, "stop": "error",
               "error": {"kind": "ZeroDivisionError", "step": 2, "call": "update", "message": "division by zero"}}
    decoded = protocol.trace(message, DATA, CAP, white_box=True)
    assert set(decoded.steps[1]) == {"step", "added", "schedule", "after_schedule"}
    with pytest.raises(protocol.Malformed, match="after 2 steps"):
        protocol.trace({**message, "error": {**message["error"], "step": 3}}, DATA, CAP, white_box=True)


@pytest.mark.parametrize(("line", "words"), [
    (b'{"type": "trace", "n": 1.5}', "float"),
    (b'{"type": "trace", "n": NaN}', "float"),
    (b"[1, 2]", "JSON object"),
    (b'{"kind": "trace"}', "JSON object"),
    (b"\xff\xfe", "not valid JSON"),
    (b"[" * 100_000, "not valid JSON"),
])
def test_parse_line_accepts_only_plain_json_objects(line: bytes, words: str) -> None:
    with pytest.raises(protocol.Malformed) as caught:
        protocol.parse_line(line)
    assert words in str(caught.value)


@pytest.mark.long
def test_correct_reports_stay_far_below_the_report_cap() -> None:
    """The child stops a run whose report passes its allowance, REPORT_MAX or more for long ids (a stall caught at
    the same step every time, well before its CPU limit); every run of a correct submission on the grading cases,
    the reach tiers' ids of 2**16 characters included, must stay far below its own."""
    from conformance.grading.judge import grading_cases
    from conformance.grading.rubric import load_rubric
    from conformance.sandbox.child import REPORT_MAX, report_max
    from conformance.sandbox.run import prepare

    module, worst, ids = correct_module(), {True: 0.0, False: 0.0}, 0
    for w in grading_cases(load_rubric())[1]:
        workload, data, cap, _ = prepare(w)  # the child's JSON has no name or tag: the workload has them
        trace = drive(module, data, cap)
        assert trace["stop"] == "done", workload.name
        chars = sum(len(r["seq_id"]) for r in data["requests"])
        ids = max(ids, chars)
        reach = "reach" in workload.tags
        worst[reach] = max(worst[reach], sum(len(s) + 1 for s in trace["steps"]) / report_max(chars))
    assert worst[False] < 1 / 4, f"a correct run of the corpus reports {worst[False]:.0%} of its allowance"
    assert worst[True] < 1 / 2, f"a correct run of a reach tier reports {worst[True]:.0%} of its allowance"
    assert report_max(ids) > REPORT_MAX, "no grading case has ids long enough to need more than REPORT_MAX"


def test_a_resample_probe_shifts_a_token_per_earlier_sample_of_its_position() -> None:
    """In a resample probe, the model's token for a position sampled again is RESAMPLE_SHIFT further per earlier
    sample (as the child's driver samples); in any other run, only the model's own token is accepted."""
    message = copy.deepcopy(GENUINE)
    first = next(s for s in message["steps"] if s["sampled"])
    seq_id, k, token = first["sampled"][0]
    first["sampled"] += [[seq_id, k, token + RESAMPLE_SHIFT], [seq_id, k, token + 2 * RESAMPLE_SHIFT]]
    assert protocol.trace(message, DATA, CAP, white_box=True, resample=True).stop == "done"
    with pytest.raises(protocol.Malformed, match="is not the model's"):
        protocol.trace(message, DATA, CAP, white_box=True)
    first["sampled"][-1][2] = token + RESAMPLE_SHIFT  # the third sample of a position is shifted twice
    with pytest.raises(protocol.Malformed, match="is not the model's"):
        protocol.trace(message, DATA, CAP, white_box=True, resample=True)


def test_a_reason_is_read_by_its_text_once_then_by_its_index() -> None:
    snaps = protocol.Snapshots({"a1", "a2"})
    why = "AttributeError: 'Sequence' object has no attribute 'num_blocks'"
    assert snaps.told({"num_blocks": why, "status": 0}, "s") == {"num_blocks": why, "status": why}
    assert snaps.told({"num_blocks": 0}, "s") == {"num_blocks": why}
    for bad in ({"num_blocks": 1}, {"num_blocks": -1}, {"num_blocks": True}, {"num_blocks": None}, ["x"]):
        with pytest.raises(protocol.Malformed):
            snaps.told(bad, "s")
