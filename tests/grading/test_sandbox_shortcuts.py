"""Work the sandbox's parent and child no longer repeat gives what repeating it gave.

- snapshot() reads a row's fields together, written out in its loop, and an output that starts with the one
  it last read by its new tokens only: on every kind of row (readable, a property that raises, a wrong type,
  a bad token, an int subclass, an output that grows, shrinks or is rewritten, a bad token at its end or
  before it) it returns what reading each row whole through the first version of read_row returned, and
  reads the submission's attributes in the same order;
- the parent's prepared items of a tuple of workloads are made once and equal fresh ones; a workload
  given as a dict is prepared again every time, and another tuple is not served
  from them;
- a probe question in the driver's own bytes is answered without parsing, with the message parsing gives;
- the child is started without address-space randomization although the flag is no longer set in a forked
  copy of the grader (Popen's vfork), and the grader's own flags are put back;
- a job's workload entries, written once per workload, read back as the job written whole.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.grading.judge import grading_cases, held_out_part
from conformance.grading.rubric import load_rubric
from conformance.sandbox import readers, watch
from conformance.sandbox.child import MUTATE, RESAMPLE, drive, encode
from conformance.sandbox.readers import SEQ_FIELDS, describe, read_field, snapshot
from conformance.sandbox.run import prepare, prepared, run_in_sandbox
from conformance.sandbox.spawn import ADDR_NO_RANDOMIZE, job_entry, job_fd
from conformance.sandbox.types import Limits, PlannedRun
from spec.model import Config
from spec.trace import Request, Workload, make_workload, workload_to_json


def first_read_row(seq: Any, seq_id: str, attempt: Any) -> tuple[list[object], dict[str, str]]:
    """read_row as it was first written (the reference for the written-out reading)."""
    try:
        nc, nt, nb, status = seq.num_computed, seq.num_tokens, seq.num_blocks, seq.status.name
        out = readers.read_output(seq, seq_id)
        if type(nc) is type(nt) is type(nb) is int and type(status) is str and min(nc, nt, nb) > -readers.BIG \
                and max(nc, nt, nb) < readers.BIG:
            return [nc, nt, nb, status[:64], out], {}
    except BaseException:  # noqa: BLE001, S110
        pass
    why: dict[str, str] = {}
    row = [attempt(lambda n=name: read_field(seq, n, seq_id), name, why) for name in SEQ_FIELDS]
    return row, why


def first_snapshot(sched: Any, seqs: dict[str, Any], sent: dict[Any, Any]) -> dict[str, object]:
    """snapshot() as it was first written."""
    snap: dict[str, object] = {}
    missing: dict[str, str] = {}

    def attempt(read: Any, name: str, why: dict[str, str]) -> object:
        try:
            return read()
        except readers.SubmissionProtocolError as e:
            why[name] = str(e)[:200]
        except BaseException as e:  # noqa: BLE001
            why[name] = "{}: {}".format(*describe(e))
        return None

    for name in ("blocks_used", "num_preemptions"):
        value = attempt(lambda n=name: readers.state_int(getattr(sched, n), n, n), name, missing)
        if value is not None:
            snap[name] = value
    same = []
    for queue in ("waiting", "running", "finished"):
        ids: Any = attempt(lambda q=queue: readers.read_ids(getattr(sched, q), q, seqs), queue, missing)
        key = ("queue", queue)
        if ids is None:
            sent.pop(key, None)
        elif sent.get(key) == ids:
            same.append(queue)
        else:
            snap[queue] = sent[key] = ids
    rows: dict[str, object] = {}
    seq_missing: dict[str, dict[str, str | int]] = {}
    for seq_id, seq in seqs.items():
        row, why = first_read_row(seq, seq_id, attempt)
        before = sent.get(seq_id)
        if before != row:
            rows[seq_id] = readers.wire_row(before, row)
            sent[seq_id] = row
            if not why:  # reasons go with a row when they change, each text once a workload (readers.told)
                sent.pop((readers.WHY, seq_id), None)
            elif sent.get((readers.WHY, seq_id)) != why:
                sent[(readers.WHY, seq_id)] = why
                seq_missing[seq_id] = {field: readers.told(text, sent) for field, text in why.items()}
    out = {**snap, "seqs": rows, "same": same, "seq_missing": seq_missing}
    if sent.get(readers.MISSING_KEY, {}) != missing:  # the reasons, when they changed
        out["missing"] = sent[readers.MISSING_KEY] = missing
    return out


class Status(enum.Enum):
    WAITING = 0
    RUNNING = 1


class Loud(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class Seq:
    """A sequence whose every read is logged; `odd` picks a way for one field to be unreadable or wrong."""

    def __init__(self, seq_id: str, log: list[str], odd: str = "") -> None:
        self.seq_id, self._log, self._odd, self.calls = seq_id, log, odd, 0

    def _read(self, name: str, value: object) -> object:
        self._log.append(f"{self.seq_id}.{name}")
        if self._odd == name + ":raise":
            raise KeyError(name)
        return value

    num_computed = property(lambda s: s._read("num_computed", True if s._odd == "bool" else 3))
    num_tokens = property(lambda s: s._read("num_tokens", 5))
    num_blocks = property(lambda s: s._read("num_blocks", 2.0 if s._odd == "float" else 2))
    status = property(lambda s: s._read("status", Status.RUNNING))

    @property
    def output(self) -> object:
        self.calls += 1
        out = {"token": [7, True], "loud": [7, Loud(8)], "huge": [1 << 200], "tuple": (7,)}.get(self._odd, [7, 8])
        if self._odd in CHANGES:  # what the output is at each read: the reader keeps the last one it read
            out = CHANGES[self._odd][min(self.calls, 3) - 1]
        return self._read("output", out if self._odd != "grows" else [7] * self.calls)


CHANGES = {"rewrite": [[7, 8], [7, 9, 8], [6, 9, 8]], "late_bad": [[7], [7, True], [7, 8]],
           "early_bad": [[7, 8], ["x", 8, 9], [7, 8, 9]], "shrinks": [[7, 8, 9], [7, 8], [7, 8, 9]],
           "same_len_bad": [[7, 8], [7, 1 << 200], [Loud(7), 8]]}


class Sched:
    def __init__(self, seqs: list[Seq], log: list[str], odd: str = "") -> None:
        self._seqs, self._log, self._odd = seqs, log, odd

    def __getattr__(self, name: str) -> object:
        self._log.append(name)
        if self._odd == name:
            raise RuntimeError(f"no {name}")
        values = {"blocks_used": 4, "num_preemptions": 0, "waiting": __import__("collections").deque(),
                  "running": list(self._seqs), "finished": []}
        return values[name] if self._odd != "types" else str(values[name])


ODD = ["", "bool", "float", "token", "loud", "huge", "tuple", "grows", "num_tokens:raise", "status:raise",
       "output:raise", "rewrite", "late_bad", "early_bad", "shrinks", "same_len_bad"]


@pytest.mark.parametrize("sched_odd", ["", "blocks_used", "running", "types"])
def test_the_written_out_reading_is_the_first_one(sched_odd: str) -> None:
    results = []
    for how in (first_snapshot, snapshot):
        log: list[str] = []
        seqs = {f"s{i}": Seq(f"s{i}", log, odd) for i, odd in enumerate(ODD)}
        sched, sent = Sched(list(seqs.values()), log, sched_odd), {}
        snaps = [json.loads(encode(how(sched, seqs, sent))) for _ in range(4)]  # later ones send changes only
        results.append((snaps, log, sent))
    assert results[0] == results[1]


WORKLOADS = tuple(make_workload(Config(8, 2, 4, 16), [Request(f"r{j}", 3 + i, 2) for j in range(i + 1)])
                  for i in range(4))


def test_prepared_items_are_the_fresh_ones_made_once_and_a_planned_run_cannot_change() -> None:
    runs = (*WORKLOADS, PlannedRun(WORKLOADS[1], "mutate"), PlannedRun(WORKLOADS[2], group=(WORKLOADS[3],)))
    fresh = [prepare(w) for w in runs]
    assert prepared(runs) == fresh and prepared(runs) == fresh
    assert [i[0] for i in prepared(runs)[:4]] == list(WORKLOADS)
    assert all(a is b for a, b in zip(prepared(runs), prepared(runs), strict=True))  # made once, planned runs too
    assert fresh[4][1] == workload_to_json(WORKLOADS[1]) and fresh[4][3] == MUTATE  # the probe is not in the JSON
    assert fresh[5][1]["group"] == [workload_to_json(WORKLOADS[3])]
    with pytest.raises(dataclasses.FrozenInstanceError):  # so the items made once stay the runs' items
        runs[-1].workload = WORKLOADS[0]
    again = tuple(WORKLOADS)  # an equal tuple is another object: its items are made for it
    assert prepared(again) == fresh[:4]
    listed = list(WORKLOADS)
    assert prepared(listed) == fresh[:4]


def test_only_a_cases_own_run_reads_state_the_runs_compared_with_it_are_black_box() -> None:
    """The cleared run, the ample twin and an instance alone are judged by their calls alone, as `check` makes them:
    reading every sequence after every call of those runs cost the child a fifth of its time for nothing."""
    impl = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"
    w = WORKLOADS[3]
    result = run_in_sandbox(impl, [w, PlannedRun(w, "mutate"), PlannedRun(w, group=()), PlannedRun(w, "resample")],
                            Limits(workload_seconds=5))
    traces = [r.trace for r in result.workloads]
    assert all(t is not None and t.steps for t in traces), result.causes()
    state = [["after_update" in step for step in t.steps] for t in traces if t is not None]
    assert [set(s) for s in state] == [{True}, {False}, {False}, {True}]
    calls = [[(step["schedule"], step["sampled"], step["finished"]) for step in t.steps] for t in traces if t]
    assert calls[0] == calls[1] == calls[2] == calls[3]
    spec = importlib.util.spec_from_file_location("impl_sched", impl)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for probe, reads in ((0, True), (MUTATE, False), (RESAMPLE, True)):  # what the child sends, not only what is read
        sent = drive(module, workload_to_json(w), 64, True, lambda p=probe: p)["steps"]
        assert {"after_update" in json.loads(step) for step in sent} == {reads}


def test_a_probe_question_in_the_drivers_bytes_is_answered_as_parsed_one_is() -> None:
    assert encode({"type": "probe", "workload": 7}) == '{"type":"probe","workload":7}'  # what boot.py writes
    answered: list[dict[str, Any]] = []
    child = object.__new__(watch.Child)
    child.run = SimpleNamespace(items=[None] * 10, key=lambda i: b"key %d" % i)  # type: ignore[assignment]
    child.messages, child.loaded, child.hello, child.first, child.current = 0, True, True, 2, 9
    child.on_probe = answered.append  # type: ignore[method-assign]
    child.on_line(b'{"type":"probe","workload":7}')  # the driver's bytes: answered without parsing
    child.on_line(b'{"type": "probe", "workload": 7}')  # the same question spelled otherwise: parsed
    child.on_line(b'{"workload":7,"type":"probe"}')
    assert answered == [{"type": "probe", "workload": 7}] * 3 and child.messages == 3


def test_the_child_runs_without_randomization_and_the_parent_keeps_its_own(tmp_path: Path) -> None:
    """Popen starts the child with vfork (no preexec_fn): the personality is set in the parent's thread around
    it and put back, so the child has ADDR_NO_RANDOMIZE and the grader's own personality is unchanged."""
    module = tmp_path / "p07_scheduler.py"
    module.write_text("import ctypes\n"  # personality(0xffffffff) reads it (a non-dumpable child's /proc is root's)
                      "raise RuntimeError('personality %x' % ctypes.CDLL(None).personality(0xffffffff))\n")
    before = Path("/proc/self/personality").read_text()
    result = run_in_sandbox(module, [WORKLOADS[0]], Limits(workload_seconds=2))
    assert Path("/proc/self/personality").read_text() == before
    assert result.load_failure is not None, result.load_error
    child = int(result.load_failure.message.split()[-1], 16)
    assert child & ADDR_NO_RANDOMIZE


def test_the_childs_addresses_do_not_depend_on_the_files_the_grader_holds_open(tmp_path: Path) -> None:
    """A submission that keys state by id() (a registry of its sequences) was graded 6.25 by one grading process and
    6.51 by a worker that held more files open: the fd numbers in the child's argv had another width, so its first
    allocations, and every id() after them, moved. Now a worker, a fresh process and one with 2**7 more open files
    start the same child."""
    module = tmp_path / "p07_scheduler.py"
    module.write_text("xs = [object() for _ in range(1000)]\ndel xs[::3]\n"
                      "raise RuntimeError('ids %x %x' % (id(object()), id([])))\n")

    code = ("import sys\nfrom conformance.sandbox.run import run_in_sandbox\n"
            "from conformance.sandbox.types import Limits\nfrom tests.grading.test_sandbox_shortcuts import WORKLOADS\n"
            "print(run_in_sandbox(sys.argv[1], [WORKLOADS[0]], Limits(workload_seconds=2)).load_failure.message)\n")
    fresh = subprocess.run([sys.executable, "-c", code, str(module)], capture_output=True, text=True, check=True,
                           cwd=Path(__file__).resolve().parents[2], close_fds=True).stdout.strip()  # few fds: one digit
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(2**7)]  # three digits
    try:
        result = run_in_sandbox(module, [WORKLOADS[0]], Limits(workload_seconds=2))
    finally:
        for fd in held:
            os.close(fd)
    assert fresh.startswith("ids ") and result.load_failure is not None
    assert result.load_failure.message == fresh


def test_a_job_written_from_kept_entries_reads_as_the_whole_job() -> None:
    items = prepared(WORKLOADS)
    entries = [job_entry(data, cap, 2) for _, data, cap, _ in items]
    assert entries == [json.dumps({"workload": data, "step_cap": cap, "cpu_seconds": 2}) for _, data, cap, _ in items]
    assert all(job_entry(data, cap, 2) is e for (_, data, cap, _), e in zip(items, entries, strict=True))  # kept
    data, cap = items[0][1], items[0][2]
    assert json.loads(job_entry(data, cap + 1, 2))["step_cap"] == cap + 1  # another cap: not the kept entry
    assert json.loads(job_entry(data, cap, 3))["cpu_seconds"] == 3  # another CPU limit: not the kept entry
    assert job_entry(dict(data), cap, 2) is not entries[0]  # an equal but other object: written for itself
    job = {"driver": "pass", "white_box": True}
    fd = job_fd(job, entries)
    with os.fdopen(fd, "rb") as f:
        read = json.loads(f.read())
    assert read == {**job, "workloads": [{"workload": d, "step_cap": c, "cpu_seconds": 2} for _, d, c, _ in items]}


def test_a_child_cannot_tell_a_held_out_case_from_a_public_one_by_its_name_or_tags() -> None:
    """Public workloads reached the child with their name and tags and held-out ones with none, so a submission
    that read the job (or the driver's frame) knew which child ran its held-out cases (from outside). Every run
    now reaches the child with neither."""
    _, public = grading_cases(load_rubric())
    _, held = held_out_part(7, 24)
    sent = [item[1] for item in prepared(public) + prepared(held)]
    named = [w.name for w in public if isinstance(w, Workload)]
    assert any(named) and len(sent) > len(public) > 1000
    for j in sent:
        assert (j["name"], j["tags"]) == ("", []), (j["name"], j["tags"])
        assert all((g["name"], g["tags"]) == ("", []) for g in j.get("group", []))
