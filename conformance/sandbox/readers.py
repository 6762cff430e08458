"""How a submission's values are read: by value and in bounds, scalars by exact type, never through a lying method.

A list, deque or tuple (or a subclass; a dict too) is read by its real items, never by an override; any
other container through len() and iteration, up to a bound. Another type than docs/api.md's that reads the
same is a note, never a finding. Standard library only: in the sandbox this is the first part of the child's
driver (with child.py), so the copy of the builtins below is what it calls, whatever a submission patches.
"""

from __future__ import annotations

import builtins
import sys
from collections import deque
from collections.abc import Callable
from types import FunctionType
from typing import Any

__builtins__ = dict(builtins.__dict__)  # type: ignore[assignment] # functions below keep this copy when a submission patches builtins
BIG = 1 << 128  # ints must be strictly inside (-BIG, BIG): the corpus goes past 64 bits; a bound keeps parsing cheap
NEG_BIG = -BIG
COUNT = "a count of schedule()'s dict"
API_TYPES = {"waiting": "deque", "running": "list", "finished": "list", "update()'s result": "list",  # docs/api.md
             "schedule()'s result": "dict", "output": "list", "status": "SequenceStatus",
             COUNT: "int", **dict.fromkeys(("blocks_used", "num_preemptions", "num_computed", "num_tokens",
                                            "num_blocks"), "int")}  # others: read, and noted
UNREADABLE = "cannot read "  # how a reason in a snapshot's "missing" starts when the attribute is there but unreadable
MARGIN = 16  # items a queue may give beyond the sequences added before reading stops: more is a finding, not a wait
OUTPUT_MAX = 1 << 16  # tokens read of an output that is no list, deque or tuple; the corpus's longest has 489
QUEUE_HINT = "it must hold the Sequence objects passed to add(), each at most once (docs/api.md)"
OUTPUT_HINT = "an output must hold the sampled int tokens in order (docs/api.md)"
REAL_ITEMS = ((deque, deque.__iter__), (list, list.__iter__), (tuple, tuple.__iter__))  # waiting's first
_type, _len, _dict_items, _list_copy, _modules = type, len, dict.items, list.copy, sys.modules
_set, _map, _min, _max, _list, _iter, _issubclass = set, map, min, max, list, iter, issubclass
_class_dict = type.__dict__["__dict__"].__get__  # a class's own namespace: a metaclass's __dict__ is never called
INTS = {int}  # the types of the items of an output
SEQ_FIELDS = ("num_computed", "num_tokens", "num_blocks", "status", "output")  # the order of a row read
NO_REASONS: dict[str, str] = {}  # every field of a row was read (never filled)
NOTED: dict[str, str] = {}  # the child's notes of the workload being run, one per attribute and type (take_notes)
_status_of: list[Any] = [None, ()]  # the Sequence class last read, and the SequenceStatus members of its module


class SubmissionProtocolError(Exception):
    """A value the submission gave back does not have the docs/api.md shape; the workload stops here."""


class Unreadable(SubmissionProtocolError):
    """A container or field that is there but cannot be read; its message starts with UNREADABLE and names it.
    A white-box attribute that is absent is a note (the checks that need it are skipped); one that is there and
    cannot be read is a finding, in `check`'s adapter and in the sandbox child alike."""


def exact_int(value: Any, what: str) -> int:
    """Return value if it is an int (bool is not) inside the 128-bit range, else stop the workload."""
    if _type(value) is not int:
        raise SubmissionProtocolError(f"{what} must be an int, got {short_repr(value)} ({type_name(value)})")
    if not -BIG < value < BIG:
        raise SubmissionProtocolError(f"{what} = {value} is outside the 128-bit range")
    return value  # type: ignore[no-any-return]


_int_value = int.__index__  # an int subclass's own value, as an int: none of its methods is called


def count_int(value: Any, what: str, noted: dict[str, str]) -> int:
    """A count of schedule()'s dict: an int, or a subclass of int (bool is not) read by its int value and noted;
    else, as exact_int, stop the workload."""
    t = _type(value)
    if t is not int and t is not bool and _issubclass(t, int):
        note(noted, COUNT, value)
        value = _int_value(value)
    return exact_int(value, what)


def state_int(value: Any, what: str, attr: str, noted: dict[str, str] = NOTED) -> int:
    """A white-box count (blocks_used, num_preemptions, a Sequence's num_computed, num_tokens or num_blocks): an int;
    a subclass of int (bool is not) or a float that is a whole number, read by its value and noted, since the
    value is what the rules speak of; else, as exact_int, unreadable."""
    t = _type(value)
    if t is float and value - value == 0 and float.is_integer(value):  # finite (inf - inf is nan) and whole
        note(noted, attr, value)
        value = int(value)
    elif t is not int and t is not bool and _issubclass(t, int):
        note(noted, attr, value)
        value = _int_value(value)
    return exact_int(value, what)


def exact_str(value: Any, what: str) -> str:
    if _type(value) is not str:
        raise SubmissionProtocolError(f"{what} must be a str, got {short_repr(value)} ({type_name(value)})")
    return value  # type: ignore[no-any-return]


def type_name(value: object) -> str:
    try:
        name = _type(value).__qualname__
        return name[:80] if _type(name) is str else "?"
    except BaseException:  # noqa: BLE001 - a metaclass may raise anything
        return "?"


def short_repr(value: object) -> str:
    """A repr for messages only: built-in types get repr(), anything else just its type name."""
    return repr(value)[:80] if _type(value) in (int, float, str, bool, type(None)) else f"<{type_name(value)} object>"


def describe(exc: BaseException) -> tuple[str, str]:
    """Name and message of an exception without trusting its __str__ more than needed."""
    try:
        message = BaseException.__str__(exc)
        message = message if _type(message) is str else "<unprintable>"
    except BaseException:  # noqa: BLE001
        message = "<unprintable>"
    return type_name(exc), message[:500]


def note(noted: dict[str, str], attr: str, value: object) -> None:
    """Note, once per attribute and type, a value that is not of its docs/api.md type but was read all the same."""
    shown = type_name(value)  # the key too: hashing a submission's class could run its metaclass
    key = f"{attr}:{shown}"
    if key not in noted and _len(noted) < 32:  # one per attribute and type: a handful, unless made to grow
        t = _type(value)
        base = next((b.__name__ for b in (list, deque, tuple, dict) if t is not b and _issubclass(t, b)), "")
        how = f" (a {base} subclass, read by its {base} items)" if base else ""
        an = "an" if shown[:1] in tuple("AEIOUaeiou") else "a"
        noted[key] = f"{attr} is {an} {shown}{how}; docs/api.md says {API_TYPES[attr]}"


def read_items(value: Any, what: str, bound: int, hint: str, catch: type[BaseException] = BaseException
               ) -> list[Any]:
    """A container's items: a list, deque or tuple (or subclass) by its real items, else by len() (if any) and
    iteration up to `bound`; else Unreadable. `catch`: what may be named (in-process Exception: time limits pass)."""
    t = _type(value)
    if t is list:  # the documented types first: the rest runs only for other containers
        return _list_copy(value)
    for base, real in REAL_ITEMS:
        if _issubclass(t, base):
            return _list(real(value))
    items: list[Any] = []
    try:
        n = _len(value) if hasattr(t, "__len__") else None  # a generator has no len()
        stop = bound if n is None else _min(n, bound)
        for item in _iter(value):
            items.append(item)
            if _len(items) > stop:
                break
    except catch as e:
        raise Unreadable("{}{}: reading it raised {}: {}; {}".format(UNREADABLE, what, *describe(e), hint)) from None
    count = _len(items)
    if count > stop or n is not None and count != n:
        said = "" if n is None else f"len() is {n} but "
        got = f"more than {stop} item{'s' * (stop != 1)}" if count > stop else f"{count} item{'s' * (count != 1)}"
        raise Unreadable(f"{UNREADABLE}{what}: {said}iterating it gives {got}; {hint}")
    return items


def read_batch(batch: Any, noted: dict[str, str] = NOTED) -> list[list[object]]:
    """schedule()'s dict (or a subclass) by its real items: an overridden __eq__ or items() is never called."""
    if not issubclass(_type(batch), dict):  # the real type: __class__ may lie
        raise SubmissionProtocolError(f"schedule() must return a dict, got {type_name(batch)}; return a new dict "
                                      "each call (docs/api.md): the caller owns it and may change it")
    pairs: list[list[object]] = []
    for key, n in list(_dict_items(batch)):  # an unknown id or an n <= 0 is reported as it is: the parent's
        seq_id = exact_str(key, "a key of schedule()'s dict")  # checks judge it (H.unknown_id, H.nonpositive, I2)
        pairs.append([seq_id, count_int(n, f"schedule()[{seq_id!r}]", noted)])  # as `check` judges it
    if _type(batch) is not dict:
        note(noted, "schedule()'s result", batch)
    return pairs


def read_ids(items: Any, what: str, known: dict[str, Any], noted: dict[str, str] = NOTED,
             catch: type[BaseException] = BaseException) -> list[str]:
    """A queue of Sequence objects (or update()'s result), read by value, as their seq_ids."""
    return read_seqs(items, what, known, noted, catch)[1]


def read_seqs(items: Any, what: str, known: dict[str, Any], noted: dict[str, str] = NOTED,
              catch: type[BaseException] = BaseException) -> tuple[list[Any], list[str]]:
    """read_ids, with the Sequence objects themselves (a one-shot iterator is read once for both)."""
    t = _type(items)
    seqs = _list_copy(items) if t is list else read_items(items, what, _len(known) + MARGIN, QUEUE_HINT, catch)
    ids: list[Any] = []
    try:  # item by item, stopping at the first that is not an added sequence: a list shared by every instance of
        for seq in seqs:  # a process grows with each run, and reading it whole at every call was quadratic
            seq_id = getattr(seq, "seq_id", None)
            if _type(seq_id) is not str or seq_id not in known:
                break
            ids.append(seq_id)
    except catch as e:
        raise Unreadable("{}{}: reading a seq_id raised {}: {}; {}".format(UNREADABLE, what, *describe(e),
                                                                           QUEUE_HINT)) from None
    if _len(ids) < _len(seqs):  # the message is made only for a bad one
        seq = seqs[_len(ids)]
        got = f"unknown seq_id {seq_id!r}" if _type(seq_id) is str else \
            f"{short_repr(seq)} ({type_name(seq)}), which is not a Sequence"
        raise Unreadable(f"{UNREADABLE}{what}: it holds {got}; {QUEUE_HINT}")
    if t is not (deque if what == "waiting" else list):
        note(noted, what, items)
    return seqs, ids


def read_output(seq: Any, what: str, noted: dict[str, str] = NOTED) -> list[int]:
    """A copy of seq.output, a container of ints in range: checked in C, item by item only to name a bad one."""
    return output_items(seq.output, what, noted)


def output_items(out: Any, what: str, noted: dict[str, str] = NOTED, known: list[int] | None = None) -> list[int]:
    """read_output on the value of seq.output, already read. `known`: the output this reader last returned for the
    sequence: a list that starts with it has only its new tokens checked, so a run reads an output of n tokens in
    O(n) per step in C, not O(n) checks per token (a decode step adds one). A position compares as the reader's own
    int of the last read, by equality, as check compares outputs with the spec's."""
    if _type(out) is list and known is not None and _len(out) >= (k := _len(known)):
        if _len(out) == k:
            if out == known:
                return known
        elif out[:k] == known:
            return known + output_items(out[k:], what, noted)
    items: list[int] = _list_copy(out) if _type(out) is list else read_items(out, f"{what}.output", OUTPUT_MAX,
                                                                             OUTPUT_HINT)
    if items and (_set(_map(_type, items)) != INTS or not _min(items) > NEG_BIG or not _max(items) < BIG):
        return [exact_int(tok, f"{what}.output item") for tok in items]  # raises for the first bad one
    if _type(out) is not list:
        note(noted, "output", out)
    return items


def status_members(cls: type) -> tuple[tuple[object, str], ...]:
    """(member, name) of WAITING, RUNNING and FINISHED of the SequenceStatus beside the Sequence class `cls`."""
    if cls is not _status_of[0]:
        try:  # the namespace its own methods run in (a second copy of the module has a SequenceStatus of its own),
            # when one of them sees a SequenceStatus (a method from a helper module, a dataclass's made ones, may not)
            home: Any = next((f.__globals__ for f in _class_dict(cls).values()
                              if _type(f) is FunctionType and "SequenceStatus" in f.__globals__), None)
            enum = home["SequenceStatus"] if home is not None else \
                getattr(_modules.get(cls.__module__), "SequenceStatus", None)
            members = tuple((m, n) for n in ("WAITING", "RUNNING", "FINISHED")
                            if (m := getattr(enum, n, None)) is not None)
        except BaseException:  # noqa: BLE001 - a module's __getattr__ may raise anything: then no members
            members = ()
        _status_of[:] = [cls, members]
    return _status_of[1]  # type: ignore[no-any-return]


def status_name(status: Any, members: tuple[tuple[object, str], ...], what: str,
                noted: dict[str, str] = NOTED) -> str:
    """The name of the SequenceStatus member `status` is, or equals (a str-valued enum's value kept as a plain
    str), or names (the member's name kept as a plain str); else its own .name (an enum of another module, the
    wire's statuses)."""
    for member, name in members:
        if status is member or status == member:  # a member equals no other member
            if status is not member:
                note(noted, "status", status)
            return name
    if _type(status) is str and any(status == name for _, name in members):  # the member's name kept as the status
        note(noted, "status", status)
        named: str = status
        return named
    own: Any = getattr(status, "name", None)
    if _type(own) is not str:
        raise Unreadable(f"{UNREADABLE}{what}.status: it is {short_repr(status)} ({type_name(status)}), which is no "
                         "SequenceStatus member and has no str name; set it to SequenceStatus.WAITING, RUNNING or "
                         "FINISHED (docs/api.md)")
    if members:  # the module has a SequenceStatus, and this is not one of its members: read by its name, noted
        note(noted, "status", status)
    return own[:64]  # type: ignore[no-any-return]


def read_field(seq: Any, name: str, seq_id: str, noted: dict[str, str] = NOTED) -> object:
    if name == "status":
        return status_name(seq.status, status_members(_type(seq)), seq_id, noted)
    if name == "output":
        return read_output(seq, seq_id, noted)
    return state_int(getattr(seq, name), f"{seq_id}.{name}", name, noted)


def take_notes() -> dict[str, dict[str, str]]:
    """The notes of the workload just run, as its trace message's field (none: no field); then none are kept."""
    notes = {"notes": dict(NOTED)} if NOTED else {}
    NOTED.clear()
    return notes


def read_fields(seq: Any, seq_id: str, attempt: Callable[[Callable[[], object], str, dict[str, str]], object],
                noted: dict[str, str] = NOTED) -> tuple[list[object], dict[str, str]]:
    """A row read again field by field, each in its own attempt, so that the unreadable fields are named (the
    first reading, in snapshot(), reads them together and fails as a whole)."""
    why: dict[str, str] = {}
    row = [attempt(lambda n=name: read_field(seq, n, seq_id, noted), name, why)  # type: ignore[misc]
           for name in SEQ_FIELDS]
    return row, why


def wire_row(before: list[object] | None, row: list[object]) -> list[object]:
    """A row as sent: [num_computed, num_tokens, num_blocks, status, tail, kept], where the output is the
    first `kept` tokens of the output last sent for the sequence, then `tail` (a decode step sends one token)."""
    out: Any = row[4]
    old: Any = before[4] if before is not None else None
    kept = _len(old) if _type(out) is list and _type(old) is list and out[:_len(old)] == old else 0
    return [*row[:4], out[kept:] if kept else out, kept]


def broke(why: str, attribute: str = "the white-box state") -> str:
    """The white-box error of state that earlier snapshots of the run read and that now cannot be read (check's
    drivers and the sandbox's parent, conformance/sandbox/protocol.py, word it alike)."""
    return (f"{UNREADABLE}{attribute}: reading it raised {why[:200]}, after earlier steps read it; every attribute "
            "of docs/api.md must stay readable for the whole run")


def reason(e: BaseException) -> str:
    """Why a read failed, for "missing": the reader's own message, or what the submission raised."""
    return str(e)[:200] if _issubclass(_type(e), SubmissionProtocolError) else "{}: {}".format(*describe(e))


UNORDERED = "finished is a set, which has no finishing order to read (docs/api.md says list): not given"
MISSING_KEY = ("missing",)  # where `sent` keeps the reasons last sent (a tuple never equals a seq_id)
WHY, TOLD = "why", ("told",)  # `sent`'s keys for a sequence's reasons last sent, and every reason text sent so far


def told(text: str, sent: dict[object, Any]) -> str | int:
    """A reason as sent: its text the first time in the workload, then the index of that first time. A Sequence
    without num_blocks lacks it on every one of 4,097 sequences, for the same reason."""
    texts: dict[str, int] = sent.setdefault(TOLD, {})
    index = texts.get(text)
    if index is None:
        texts[text] = len(texts)
        return text
    return index


def snapshot(sched: object, seqs: dict[str, object], sent: dict[object, Any],
             catch: type[BaseException] = BaseException, noted: dict[str, str] = NOTED) -> dict[str, object]:
    """Read the white-box attributes that exist; each unreadable one is named in "missing", sent only when the
    reasons differ from the ones last sent (none: no "missing" at all).

    A sequence's row [num_computed, num_tokens, num_blocks, status, output], and a queue, is sent only
    when it differs from the one last sent (``sent``, per workload, keyed by seq_id or ("queue", name)); a
    queue read but not sent is named in "same", and the parent carries it forward like a row. A sent row's
    reasons ("seq_missing") are sent only when they differ from the ones last sent for its sequence, each text
    once a workload and then by its index (told). `catch`: what a read may raise and be named for (check's
    adapter reads in its own process, where a time limit's exception must pass); `noted`: where the notes go.

    A `finished` kept in a set has no finishing order to read: it is not given, as if missing (the invariants are
    judged without it, conformance/checks/whitebox.py to_state).
    """
    snap: dict[str, object] = {}
    missing: dict[str, str] = {}

    def attempt(read: Callable[[], object], name: str, why: dict[str, str]) -> object:
        try:
            return read()
        except catch as e:  # a property may raise anything, even SystemExit
            why[name] = reason(e)
        return None

    for name in ("blocks_used", "num_preemptions"):  # what attempt() does, written out: this runs at every call
        try:
            snap[name] = state_int(getattr(sched, name), name, name, noted)
        except catch as e:  # a property may raise anything, even SystemExit
            missing[name] = reason(e)
    same = []
    for queue in ("waiting", "running", "finished"):
        key = ("queue", queue)  # a tuple never equals a seq_id
        try:
            value = getattr(sched, queue)
            if queue == "finished" and _issubclass(_type(value), (set, frozenset)):
                raise SubmissionProtocolError(UNORDERED)
            ids: Any = read_ids(value, queue, seqs, noted)
        except catch as e:
            missing[queue] = reason(e)
            sent.pop(key, None)
            continue
        if sent.get(key) == ids:
            same.append(queue)
        else:
            snap[queue] = sent[key] = ids
    rows: dict[str, object] = {}
    seq_missing: dict[str, dict[str, str | int]] = {}
    seq: Any
    for seq_id, seq in seqs.items():
        row: list[object] | None = None
        before = sent.get(seq_id)
        try:  # the row's fields read together, once; this runs for every sequence at every call
            nc, nt, nb, status = seq.num_computed, seq.num_tokens, seq.num_blocks, seq.status
            status = status_name(status, status_members(_type(seq)), seq_id, noted)
            out = output_items(seq.output, seq_id, noted, None if before is None else before[4])
            if _type(nc) is _type(nt) is _type(nb) is int and NEG_BIG < nc < BIG and NEG_BIG < nt < BIG \
                    and NEG_BIG < nb < BIG:
                row, why = [nc, nt, nb, status, out], NO_REASONS
        except catch:  # a property may raise anything: read again field by field
            pass
        if row is None:
            row, why = read_fields(seq, seq_id, attempt, noted)
        if before != row:
            rows[seq_id] = wire_row(before, row)
            sent[seq_id] = row
            if not why:
                sent.pop((WHY, seq_id), None)
            elif sent.get((WHY, seq_id)) != why:  # the reasons sent when they change, each text once a workload
                sent[(WHY, seq_id)] = why
                seq_missing[seq_id] = {field: told(text, sent) for field, text in why.items()}
    snap.update(seqs=rows, same=same, seq_missing=seq_missing)
    if sent.get(MISSING_KEY, NO_REASONS) != missing:  # sent when it changed, as a row is: an attribute missing for a
        snap["missing"] = sent[MISSING_KEY] = missing  # whole run of 2,049 steps costs its reasons once, not per call
    return snap
