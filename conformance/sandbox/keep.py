"""What outlives a call: every value schedule() and update() returned in one run, kept and read again at its end.

A caller may keep what a call returned (docs/api.md), so a returned dict or list must not change later
nor come back from another call, and a Sequence that update() returns must be the object passed to add()
and keep its fields once finished. The run's driver hands each returned value to a ``Keeper``, which
holds the object itself (so no id is reused while the run lasts) with a copy of its contents then, and
``report`` reads each again at the end: the first things that changed, in the order of the calls, as
plain JSON data (conformance/retention.py ``Kept`` is its typed form). The same code keeps the values in
`check`'s adapter (conformance/adapters.py) and in the sandbox child, so both report the same things.
Standard library only: in the sandbox it is part of the child's driver, after readers.py.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from conformance.sandbox.readers import (
    BIG,
    OUTPUT_HINT,
    OUTPUT_MAX,
    read_items,
    short_repr,
    status_members,
    status_name,
    type_name,
)

KEPT_MAX = 1 << 14  # values kept per run, the rest not read again (the longest corpus run returns about 4,000)
SHOWN_MAX = 64  # items of a value shown in a report: a longer one ends with "..."
SHOWN_TEXT = 200  # characters of a string shown
REPORTED = 4  # things reported per run: the first is the finding, a few more help a reader
FIELDS = ("num_computed", "num_blocks", "status", "output")  # what a finished Sequence keeps


class Returned:
    """One value a call returned: the object, its contents then, and (update()) each Sequence with its fields then."""

    __slots__ = ("call", "copy", "fields", "step", "value")

    def __init__(self, step: int, call: str, value: object, copy: object,
                 fields: tuple[tuple[Any, dict[str, Any]], ...]) -> None:
        self.step, self.call, self.value, self.copy, self.fields = step, call, value, copy, fields


MUTABLE = (dict, list, deque)  # the containers a returned value can change in after its call, read by their own items
# (docs/api.md allows any container update() returns that reads as a list: a deque kept by the caller changes as a
# list does; a tuple cannot, and a container of the submission's own class is read once, by the driver, not again)


def contents(value: object) -> object:
    """A returned value's contents by its real items (an overridden items() or __iter__ is never called)."""
    if issubclass(type(value), dict):
        return list(dict.items(value))  # type: ignore[arg-type]
    if issubclass(type(value), deque):
        return list(deque.__iter__(value))  # type: ignore[arg-type]
    return list(list.__iter__(value)) if issubclass(type(value), list) else value  # type: ignore[arg-type]


def scalar(value: object) -> object:
    """A value as plain data: an int in range, a short str or None as it is, anything else by its type name."""
    if value is None or type(value) is int and -BIG < value < BIG:
        return value
    return value[:SHOWN_TEXT] if type(value) is str else short_repr(value)


def bounded(items: list[Any]) -> list[Any]:
    return items[:SHOWN_MAX] + ["..."] if len(items) > SHOWN_MAX else items


class Keeper:
    """The values of one run. `added`: the Sequence objects passed to add(), by seq_id (the driver's own dict);
    `catch`: what a read may raise and be recorded (in process Exception, so that a time limit passes)."""

    def __init__(self, added: dict[str, Any], catch: type[BaseException] = BaseException) -> None:
        self.added, self.catch = added, catch
        self.returned: list[Returned] = []

    def schedule(self, step: int, value: object) -> None:
        if len(self.returned) < KEPT_MAX:
            copy = list(dict.items(value)) if type(value) is dict else contents(value)
            self.returned.append(Returned(step, "schedule", value, copy, ()))

    def update(self, step: int, value: object, items: list[Any]) -> None:
        """update()'s result and its items, as read once by the driver (a one-shot iterator is not read twice)."""
        if len(self.returned) < KEPT_MAX:
            self.returned.append(Returned(step, "update", value, items, tuple([(s, self.fields(s)) for s in items])))

    def fields(self, seq: Any) -> dict[str, Any]:
        """A Sequence's observable fields, read by value; one that cannot be read is kept as it is."""
        status, output = getattr(seq, "status", None), getattr(seq, "output", None)
        try:
            status = status_name(status, status_members(type(seq)), "seq", {})
            output = read_items(output, "output", OUTPUT_MAX, OUTPUT_HINT, self.catch)
        except self.catch:  # noqa: S110 - kept as they are: the same reading at the end of the run compares them
            pass
        return {"num_computed": getattr(seq, "num_computed", None), "num_blocks": getattr(seq, "num_blocks", None),
                "status": status, "output": output}

    def report(self) -> list[dict[str, object]]:
        """What changed since the values were returned, in the order of the calls: at most REPORTED things."""
        found: list[dict[str, object]] = []
        first: dict[int, Returned] = {}
        for r in self.returned:
            if type(r.value) is dict and not r.fields and first.setdefault(id(r.value), r) is r:  # most of them:
                if not self.differ(list(dict.items(r.value)), r.copy):  # met once, unchanged
                    continue
                del first[id(r.value)]  # again() looks at it whole
            found += self.again(r, first)
            if len(found) >= REPORTED:
                break
        return found[:REPORTED]

    def again(self, r: Returned, first: dict[int, Returned]) -> list[dict[str, object]]:
        """What reading one returned value again shows: its object returned before, its contents, its Sequences."""
        found: list[dict[str, object]] = []
        head = {"step": r.step, "call": r.call}
        if issubclass(type(r.value), MUTABLE):
            earlier = first.setdefault(id(r.value), r)
            if earlier is not r:
                found.append({**head, "kind": "aliased", "earlier": [earlier.step, earlier.call]})
            now = contents(r.value)
            if self.differ(now, r.copy):
                found.append({**head, "kind": "changed", "then": self.shown(r.copy), "now": self.shown(now)})
        for seq, then in r.fields:
            seq_id = self.seq_id(seq)
            if type(seq_id) is str and seq_id in self.added and self.added[seq_id] is not seq:
                found.append({**head, "kind": "replaced", "seq": scalar(seq_id)})
            try:
                later: dict[str, Any] = self.fields(seq)
            except self.catch as e:  # shown in place of the first field
                later = dict.fromkeys(FIELDS, f"<raised {type_name(e)}>")
            name = next((k for k in FIELDS if self.differ(later[k], then[k])), None)
            if name is not None:
                found.append({**head, "kind": "field", "seq": scalar(seq_id), "field": name,
                              "then": self.value(then[name]), "now": self.value(later[name])})
        return found

    def seq_id(self, seq: object) -> object:
        """A Sequence's seq_id read at the end of the run; what reading it raises is shown in its place."""
        try:
            return getattr(seq, "seq_id", None)
        except self.catch as e:
            return f"<raised {type_name(e)}>"

    def differ(self, a: object, b: object) -> bool:
        try:
            return bool(a != b)
        except self.catch:  # a comparison the submission's own __eq__ breaks: not what was returned
            return True

    def shown(self, value: object) -> object:
        """A returned value's contents shown: a dict's [key, value] pairs, a list's Sequences by seq_id."""
        if type(value) is not list:
            return scalar(value)
        return bounded([bounded([scalar(x) for x in p]) if type(p) is tuple else self.item(p) for p in value])

    def item(self, p: object) -> object:
        seq_id = self.seq_id(p)
        return scalar(seq_id) if type(seq_id) is str else short_repr(p)

    def value(self, field: object) -> object:
        return bounded([scalar(x) for x in field]) if type(field) is list else scalar(field)
