"""The sandbox child's driver: run a submission through whole workloads and return plain JSON data.

conformance.sandbox.boot loads this source inside the sandboxed child (it arrives in the job file,
since the project tree is hidden there), and sandbox.bench imports it in-process to measure the
sandbox's overhead. It uses the standard library only and never imports the project. Every value
the submission gives back is read with exact-type checks (bool is not int, a dict subclass is read
by its real items) and stops the workload with a protocol error if it does not have the docs/api.md
shape. Nothing it returns is trusted: the parent validates every field (docs/sandbox.md).
"""

from __future__ import annotations

import builtins
import importlib.abc
import json
from collections import deque
from collections.abc import Callable
from typing import Any

from spec.loop import Steps

__builtins__ = dict(builtins.__dict__)  # type: ignore[assignment] # functions below keep this copy when a submission patches builtins
PROTOCOL = 1
BIG = 1 << 128  # ints must be strictly inside (-BIG, BIG): the corpus goes past 64 bits; a bound keeps parsing cheap
# docs/api.md fixes these types; a queue of another type (a tuple, a generator, running as a deque) is a
# white-box finding (I6), read by the real type's own iterator, so an overridden __iter__ is never called
QUEUE_TYPES = {"waiting": deque, "running": list, "finished": list, "update()'s result": list}
REPORT_MAX = 2 << 20  # bytes of one workload's steps; correct runs of the corpus stay under 0.3 MB (a test checks)
WRONG_TYPE = "wrong type: "  # how a reason in a snapshot's "missing" says the attribute is there but mistyped
_type, _len, _dict_items, _list_iter, _deque_iter = type, len, dict.items, list.__iter__, deque.__iter__
_set, _map, _min, _max = set, map, min, max


def _reject(value: object) -> None:
    raise TypeError(f"cannot send a {type(value).__name__} to the parent")


def _make_encoder() -> Callable[[object], str]:
    """A compact JSON encoder built from the C accelerator, which patched builtins or json cannot reach."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
    chunks = make(None, _reject, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, False)
    return lambda obj: "".join(chunks(obj, 0))


encode = _make_encoder()


class SubmissionProtocolError(Exception):
    """A value the submission gave back does not have the docs/api.md shape; the workload stops here."""


class RefusedImport(ImportError):
    """The submission imported one of the grader's own packages."""


class Refuser(importlib.abc.MetaPathFinder):
    """Refuse the project's packages by name; a diagnostic, not a security boundary."""

    def __init__(self, names: list[str]) -> None:
        self.names = frozenset(names)
        self.hits: list[str] = []

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        top = fullname.partition(".")[0]
        if top in self.names:
            self.hits.append(fullname)
            raise RefusedImport(f"import of {fullname!r} refused: a submission may not import the grader's "
                                f"packages ({', '.join(sorted(self.names))}); submit a self-contained module")
        return None


def exact_int(value: Any, what: str) -> int:
    """Return value if it is an int (bool is not) inside the 128-bit range, else stop the workload."""
    if _type(value) is not int:
        raise SubmissionProtocolError(f"{what} must be an int, got {short_repr(value)} ({type_name(value)})")
    if not -BIG < value < BIG:
        raise SubmissionProtocolError(f"{what} = {value} is outside the 128-bit range")
    number: int = value
    return number


def exact_str(value: Any, what: str) -> str:
    if _type(value) is not str:
        raise SubmissionProtocolError(f"{what} must be a str, got {short_repr(value)} ({type_name(value)})")
    text: str = value
    return text


def type_name(value: object) -> str:
    try:
        name = _type(value).__qualname__
        return name[:80] if _type(name) is str else "?"
    except BaseException:  # noqa: BLE001 - a metaclass may raise anything
        return "?"


def short_repr(value: object) -> str:
    """A repr for messages only: built-in types get repr(), anything else just its type name."""
    if _type(value) in (int, float, str, bool, type(None)):
        return repr(value)[:80]
    return f"<{type_name(value)} object>"


def describe(exc: BaseException) -> tuple[str, str]:
    """Name and message of an exception without trusting its __str__ more than needed."""
    try:
        message = BaseException.__str__(exc)
        message = message if _type(message) is str else "<unprintable>"
    except BaseException:  # noqa: BLE001
        message = "<unprintable>"
    return type_name(exc), message[:500]


def read_batch(batch: Any, known: dict[str, Any]) -> list[list[object]]:
    """Read schedule()'s dict by its real items (an overridden __eq__ or items() is never called)."""
    if not issubclass(_type(batch), dict):  # the real type: __class__ may lie
        raise SubmissionProtocolError(f"schedule() must return a dict, got {type_name(batch)}")
    pairs: list[list[object]] = []
    for key, n in list(_dict_items(batch)):
        seq_id = exact_str(key, "a key of schedule()'s dict")
        if seq_id not in known:
            raise SubmissionProtocolError(f"schedule() returned unknown seq_id {seq_id!r}; only added ids may appear")
        n = exact_int(n, f"schedule()[{seq_id!r}]")
        if n < 1:
            raise SubmissionProtocolError(f"schedule()[{seq_id!r}] = {n}; every n must be >= 1 (I2)")
        pairs.append([seq_id, n])
    return pairs


def read_ids(items: Any, what: str, known: dict[str, Any]) -> list[str]:
    """Read a queue of Sequence objects (of its docs/api.md type, or a subclass) as their seq_ids."""
    want = QUEUE_TYPES[what]
    if not issubclass(_type(items), want):
        raise SubmissionProtocolError(f"{WRONG_TYPE}{what} must be a {want.__name__} (docs/api.md), "
                                      f"got {type_name(items)}")
    ids = [getattr(seq, "seq_id", None) for seq in (_list_iter(items) if want is list else _deque_iter(items))]
    for seq_id in ids:
        if _type(seq_id) is not str or seq_id not in known:  # the message is made only for a bad one
            seq_id = exact_str(seq_id, f"seq_id of an item of {what}")
            raise SubmissionProtocolError(f"{what} holds unknown seq_id {seq_id!r}")
    return ids  # type: ignore[return-value]


INTS = {int}


def read_output(seq: Any, what: str) -> list[int]:
    """A copy of seq.output, a list of ints in range: checked in C, item by item only to name a bad one."""
    out = seq.output
    if _type(out) is not list:
        raise SubmissionProtocolError(f"{what}.output must be a list, got {type_name(out)}")
    items: list[int] = list.copy(out)  # the real type is list: no method of it can be overridden
    if items and (_set(_map(_type, items)) != INTS or not _min(items) > -BIG or not _max(items) < BIG):
        return [exact_int(tok, f"{what}.output item") for tok in items]  # raises for the first bad one
    return items


SEQ_FIELDS = ("num_computed", "num_tokens", "num_blocks", "status", "output")  # the order of a row read


def read_field(seq: Any, name: str, seq_id: str) -> object:
    if name == "status":
        return exact_str(seq.status.name, f"{seq_id}.status.name")[:64]
    if name == "output":
        return read_output(seq, seq_id)
    return exact_int(getattr(seq, name), f"{seq_id}.{name}")


def read_row(seq: Any, seq_id: str, attempt: Callable[[Callable[[], object], str, dict[str, str]], object]
             ) -> tuple[list[object], dict[str, str]]:
    """One sequence's row [num_computed, num_tokens, num_blocks, status, output] and why a field is unreadable.

    The fields are read once, together; only when one fails are they read again one by one, to name it."""
    try:
        nc, nt, nb, status = seq.num_computed, seq.num_tokens, seq.num_blocks, seq.status.name
        out = read_output(seq, seq_id)
        if _type(nc) is _type(nt) is _type(nb) is int and _type(status) is str and _min(nc, nt, nb) > -BIG \
                and _max(nc, nt, nb) < BIG:
            return [nc, nt, nb, status[:64], out], {}
    except BaseException:  # noqa: BLE001, S110 - a property may raise anything: read again field by field
        pass
    why: dict[str, str] = {}
    row = [attempt(lambda n=name: read_field(seq, n, seq_id), name, why) for name in SEQ_FIELDS]  # type: ignore[misc]
    return row, why


def wire_row(before: list[object] | None, row: list[object]) -> list[object]:
    """A row as sent: [num_computed, num_tokens, num_blocks, status, tail, kept], where the output is the
    first `kept` tokens of the output last sent for the sequence, then `tail` (a decode step sends one token)."""
    out: Any = row[4]
    old: Any = before[4] if before is not None else None
    kept = _len(old) if _type(out) is list and _type(old) is list and out[:_len(old)] == old else 0
    return [*row[:4], out[kept:] if kept else out, kept]


def snapshot(sched: object, seqs: dict[str, object], sent: dict[object, list[object]]) -> dict[str, object]:
    """Read the white-box attributes that exist; each unreadable one is named in "missing".

    A sequence's row [num_computed, num_tokens, num_blocks, status, output], and a queue, is sent only
    when it differs from the one last sent (``sent``, per workload, keyed by seq_id or ("queue", name)); a
    queue read but not sent is named in "same", and the parent carries it forward like a row.
    """
    snap: dict[str, object] = {}
    missing: dict[str, str] = {}

    def attempt(read: Callable[[], object], name: str, why: dict[str, str]) -> object:
        try:
            return read()
        except SubmissionProtocolError as e:
            why[name] = str(e)[:200]
        except BaseException as e:  # noqa: BLE001 - a property may raise anything, even SystemExit
            why[name] = "{}: {}".format(*describe(e))
        return None

    for name in ("blocks_used", "num_preemptions"):
        value = attempt(lambda n=name: exact_int(getattr(sched, n), n), name, missing)  # type: ignore[misc]
        if value is not None:
            snap[name] = value
    same = []
    for queue in ("waiting", "running", "finished"):
        ids: Any = attempt(lambda q=queue: read_ids(getattr(sched, q), q, seqs), queue, missing)  # type: ignore[misc]
        key = ("queue", queue)  # a tuple never equals a seq_id
        if ids is None:
            sent.pop(key, None)
        elif sent.get(key) == ids:
            same.append(queue)
        else:
            snap[queue] = sent[key] = ids
    rows: dict[str, object] = {}
    seq_missing: dict[str, dict[str, str]] = {}
    for seq_id, seq in seqs.items():
        row, why = read_row(seq, seq_id, attempt)
        before = sent.get(seq_id)
        if before != row:
            rows[seq_id] = wire_row(before, row)
            sent[seq_id] = row
            if why:
                seq_missing[seq_id] = why
    snap["seqs"] = rows
    snap["same"] = same
    snap["missing"] = missing
    snap["seq_missing"] = seq_missing
    return snap


def trace_line(index: int, trace: dict[str, object], refused: list[str]) -> str:
    """The trace message of workload `index`: drive()'s steps are already encoded, so they are spliced in."""
    head = encode({"type": "trace", "workload": index, "stop": trace["stop"], "error": trace["error"],
                   "refused": refused})
    steps: Any = trace["steps"]
    return head[:-1] + ',"steps":[' + ",".join(steps) + "]}"


def never() -> bool:
    return False


RESERVED_KINDS = ("bad_result", "CallTimeout")  # error kinds the driver itself gives (docs/trace-format.md)


def exception_kind(e: BaseException) -> tuple[str, str]:
    """An error record's kind and message for an exception the submission raised; never a reserved kind."""
    name, message = describe(e)
    return (f"{name} (raised)" if name in RESERVED_KINDS else name), message


def drive(module: Any, workload: dict[str, Any], step_cap: int, white_box: bool = True,
          probed: Callable[[], bool] = never) -> dict[str, object]:
    """Run one workload through the docs/api.md protocol; the observed trace of docs/trace-format.md as plain
    JSON data, each step's record already encoded as JSON text (trace_line makes the message).

    Every run takes this same path. Whether the run is a fresh-dict probe is asked of ``probed`` only
    after the first schedule() has returned (in the sandbox it reads the parent's probe channel), so
    nothing the submission can see before or during its first call tells a probe from a scored run.
    """
    config = workload["config"]
    base: dict[str, int] = workload["sample"]["base"]
    eos_at = {k: frozenset(v) for k, v in workload["sample"].get("eos_at", {}).items()}
    eos = config["eos"]
    seqs: dict[str, object] = {}
    steps: list[str] = []  # each step's record, encoded once
    size = 0
    sampled: list[list[object]] = []
    sample_error: list[str] = []
    sent: dict[object, list[object]] = {}  # rows and queues last sent, for snapshot's deltas
    record: dict[str, object] | None = None  # the step being run: sent even when a call in it fails

    def sample_fn(seq: Any) -> int:
        """The model: token k of s is base[s] + k, or eos at the positions eos_at[s]."""
        try:
            seq_id = exact_str(seq.seq_id, "sample_fn(seq): seq.seq_id")
            if seq_id not in seqs:
                raise SubmissionProtocolError(f"sample_fn got unknown seq_id {seq_id!r}")
            k = _len(read_output(seq, f"sample_fn({seq_id!r}): seq"))
        except SubmissionProtocolError as e:
            sample_error.append(str(e))
            raise
        token = eos if k in eos_at.get(seq_id, ()) else base[seq_id] + k
        sampled.append([seq_id, k, token])
        return token

    def ended(stop: str, error: dict[str, object] | None) -> dict[str, object]:
        if record is not None and stop == "error":
            steps.append(encode(record))  # the step that failed, with what its calls returned before
        return {"steps": steps, "stop": stop, "error": error}

    run: Steps[dict[str, Any]] = Steps(workload["requests"], lambda r: r["arrival"], lambda r: r["seq_id"],
                                       step_cap)
    step, call = 0, "create"
    try:
        sched = module.Scheduler(num_blocks=config["num_blocks"], block_size=config["block_size"],
                                 max_num_seqs=config["max_num_seqs"],
                                 max_num_batched_tokens=config["max_num_batched_tokens"],
                                 sample_fn=sample_fn, eos=eos)
        for step, arrivals in run:
            added: list[str] = []
            record = {"step": step, "added": added}
            for r in arrivals:
                call = f"add({r['seq_id']!r})"
                seq = module.Sequence(r["seq_id"], r["prompt_len"], r["max_tokens"])
                sched.add(seq)
                seqs[r["seq_id"]] = seq
                added.append(r["seq_id"])
            call = "schedule"
            del sampled[:]  # a sample_fn call during schedule() is recorded with this step too
            returned = sched.schedule()
            record["schedule"] = read_batch(returned, seqs)
            if probed() and _type(returned) is dict:  # asked only now, after the call returned
                returned.clear()  # a careless caller; a conforming submission must not notice
            if white_box:
                record["after_schedule"] = snapshot(sched, seqs, sent)
            call = "update"
            done = sched.update()
            if sample_error:
                raise SubmissionProtocolError(sample_error[0])
            record["sampled"] = list(sampled)
            record["finished"] = finished = read_ids(done, "update()'s result", seqs)
            run.finished(finished)
            if white_box:
                record["after_update"] = snapshot(sched, seqs, sent)
            text, record = encode(record), None
            size += _len(text) + 1
            if size > REPORT_MAX:
                raise SubmissionProtocolError(
                    f"the report of this workload passed {REPORT_MAX >> 20} MB in step {step} (every step's "
                    f"batch and state are reported) without every request finishing; the largest correct run "
                    f"of the corpus reports far less: look for steps that repeat without progress")
            steps.append(text)
    except SubmissionProtocolError as e:
        return ended("error", {"step": step, "call": call, "kind": "bad_result", "message": str(e)[:500]})
    except BaseException as e:  # noqa: BLE001 - SystemExit, KeyboardInterrupt and custom BaseExceptions too
        if sample_error:  # the submission swallowed or replaced our protocol error
            return ended("error", {"step": step, "call": "update", "kind": "bad_result",
                                   "message": sample_error[0][:500]})
        kind, message = exception_kind(e)
        return ended("error", {"step": step, "call": call, "kind": kind, "message": message})
    return ended("done" if run.done else "bound", None)
