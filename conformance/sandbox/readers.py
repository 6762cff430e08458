"""How the sandbox child reads what a submission gives back: exact types, real contents, bounded sizes.

Every value is read with exact-type checks (bool is not int, a dict subclass is read by its real
items, an overridden __iter__ is never called) and stops the workload with a protocol error if it
does not have the docs/api.md shape. It uses the standard library only: in the sandbox it is the
first part of the child's driver (conformance/sandbox/watch.py assembles it with child.py), so the
copy of the builtins below is what every function of the driver calls, whatever a submission
patches later.
"""

from __future__ import annotations

import builtins
from collections import deque
from collections.abc import Callable
from typing import Any

__builtins__ = dict(builtins.__dict__)  # type: ignore[assignment] # functions below keep this copy when a submission patches builtins
BIG = 1 << 128  # ints must be strictly inside (-BIG, BIG): the corpus goes past 64 bits; a bound keeps parsing cheap
NEG_BIG = -BIG
# docs/api.md fixes these types; a queue of another type (a tuple, a generator, running as a deque) is a
# white-box finding (I6), read by the real type's own iterator, so an overridden __iter__ is never called
QUEUE_TYPES = {"waiting": deque, "running": list, "finished": list, "update()'s result": list}
WRONG_TYPE = "wrong type: "  # how a reason in a snapshot's "missing" says the attribute is there but mistyped
_type, _len, _dict_items, _list_iter, _deque_iter = type, len, dict.items, list.__iter__, deque.__iter__
_set, _map, _min, _max = set, map, min, max


class SubmissionProtocolError(Exception):
    """A value the submission gave back does not have the docs/api.md shape; the workload stops here."""


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
    return output_items(seq.output, what)


def output_items(out: Any, what: str) -> list[int]:
    """read_output on the value of seq.output, already read."""
    if _type(out) is not list:
        raise SubmissionProtocolError(f"{what}.output must be a list, got {type_name(out)}")
    items: list[int] = list.copy(out)  # the real type is list: no method of it can be overridden
    if items and (_set(_map(_type, items)) != INTS or not _min(items) > NEG_BIG or not _max(items) < BIG):
        return [exact_int(tok, f"{what}.output item") for tok in items]  # raises for the first bad one
    return items


SEQ_FIELDS = ("num_computed", "num_tokens", "num_blocks", "status", "output")  # the order of a row read
NO_REASONS: dict[str, str] = {}  # every field of a row was read (never filled)


def read_field(seq: Any, name: str, seq_id: str) -> object:
    if name == "status":
        return exact_str(seq.status.name, f"{seq_id}.status.name")[:64]
    if name == "output":
        return read_output(seq, seq_id)
    return exact_int(getattr(seq, name), f"{seq_id}.{name}")


def read_fields(seq: Any, seq_id: str, attempt: Callable[[Callable[[], object], str, dict[str, str]], object]
                ) -> tuple[list[object], dict[str, str]]:
    """A row read again field by field, each in its own attempt, so that the unreadable fields are named (the
    first reading, in snapshot(), reads them together and fails as a whole)."""
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

    for name in ("blocks_used", "num_preemptions"):  # what attempt() does, written out: this runs at every call
        try:
            snap[name] = exact_int(getattr(sched, name), name)
        except SubmissionProtocolError as e:
            missing[name] = str(e)[:200]
        except BaseException as e:  # noqa: BLE001 - a property may raise anything, even SystemExit
            missing[name] = "{}: {}".format(*describe(e))
    same = []
    for queue in ("waiting", "running", "finished"):
        key = ("queue", queue)  # a tuple never equals a seq_id
        try:
            ids: Any = read_ids(getattr(sched, queue), queue, seqs)
        except SubmissionProtocolError as e:
            missing[queue] = str(e)[:200]
            sent.pop(key, None)
            continue
        except BaseException as e:  # noqa: BLE001
            missing[queue] = "{}: {}".format(*describe(e))
            sent.pop(key, None)
            continue
        if sent.get(key) == ids:
            same.append(queue)
        else:
            snap[queue] = sent[key] = ids
    rows: dict[str, object] = {}
    seq_missing: dict[str, dict[str, str]] = {}
    seq: Any
    for seq_id, seq in seqs.items():
        row: list[object] | None = None
        try:  # the row's fields read together, once; this runs for every sequence at every call
            nc, nt, nb, status = seq.num_computed, seq.num_tokens, seq.num_blocks, seq.status.name
            out = output_items(seq.output, seq_id)
            if _type(nc) is _type(nt) is _type(nb) is int and _type(status) is str and NEG_BIG < nc < BIG \
                    and NEG_BIG < nt < BIG and NEG_BIG < nb < BIG:
                row, why = [nc, nt, nb, status[:64], out], NO_REASONS
        except BaseException:  # noqa: BLE001, S110 - a property may raise anything: read again field by field
            pass
        if row is None:
            row, why = read_fields(seq, seq_id, attempt)
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
