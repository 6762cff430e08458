"""The observed trace as typed values: what a scheduler under test did with one workload.

docs/trace-format.md ("Observed trace") describes the format; these classes are it. Every driver records it
(conformance/drivers.py, conformance/checks/history.py, the sandbox's parent in conformance/grading/observe.py),
``Observed.from_json`` reads one back with an error that names the field and the value, and ``json_schema``
generates its JSON Schema from the classes: conformance/schemas/observed.schema.json is that output
(``python -m conformance.observed`` prints it; tests/conformance/test_observed_format.py compares). Standard
library only, so that anything that reads or writes traces can carry it.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeAlias, Union

FORMAT, VERSION = "schedcheck/observed", 1
Stop = Literal["done", "bound", "error"]


class ObservedError(ValueError):
    """A trace that is not of this format: the message names the field (as a JSON path) and its value."""


class _Absent:
    """A step field the run did not record (a black-box run has no snapshots): left out of the JSON, which is not
    the same as null (recorded, and unreadable)."""

    _one: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._one is None:
            cls._one = super().__new__(cls)
        return cls._one

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


@dataclass(frozen=True, slots=True)
class Minimum:
    """An integer field's least value (typing.Annotated metadata)."""

    value: int


@dataclass(frozen=True, slots=True)
class Keys:
    """The keys an object field must have (typing.Annotated metadata)."""

    names: tuple[str, ...]


# The white-box attributes a submission may lack and still have the rest of its state judged: each is null in a
# snapshot that lacks it. Without a waiting or running queue, or a sequence's num_computed or output, no invariant
# can be judged: that snapshot is null, and the note names the attribute (docs/api.md, "What the suite observes").
OPTIONAL_NAMES = ("blocks_used", "num_preemptions", "finished")
OPTIONAL_FIELDS = ("num_tokens", "num_blocks", "status")

PARTLY = "white-box checks partly skipped: "  # how the note of a run judged without OPTIONAL_* values starts


def white_box_note(missing: str, judged: bool) -> str:
    """A run's note on the white-box values it could not read (`missing` names them and says why): `judged`, its
    snapshots were judged on the rest."""
    if judged:
        return f"{PARTLY}{missing}; the invariants are judged on every value it does give"
    return f"white-box checks skipped: {missing}"


Step1: TypeAlias = Annotated[int, Minimum(1)]
Step0: TypeAlias = Annotated[int, Minimum(0)]  # step 0: the constructor
Count: TypeAlias = Annotated[int, Minimum(0)]


@dataclass(frozen=True, slots=True)
class SeqState:
    """One sequence's fields after a call, as its Sequence object showed them; null: the sequence did not give
    it (OPTIONAL_FIELDS only: the invariants that need it are not judged)."""

    num_computed: int
    num_tokens: int | None
    num_blocks: int | None
    status: str | None
    output: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The white-box state after a call: the counters, the three queues in order, every added sequence; null: the
    Scheduler did not give it (OPTIONAL_NAMES only: the invariants that need it are not judged)."""

    blocks_used: int | None
    num_preemptions: int | None
    waiting: tuple[str, ...]
    running: tuple[str, ...]
    finished: tuple[str, ...] | None
    seqs: dict[str, SeqState]


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One step: the requests added before schedule(), what each call returned, the state after each."""

    step: Step1
    added: tuple[str, ...]
    schedule: tuple[tuple[str, int], ...] | None | _Absent = ABSENT  # null: not a dict[str, int] (error says why)
    after_schedule: Snapshot | None | _Absent = ABSENT  # absent in a black-box run; null: unreadable
    sampled: tuple[tuple[str, Count, int], ...] | _Absent = ABSENT  # [seq_id, len(output) at the call, token]
    finished: tuple[str, ...] | _Absent = ABSENT
    after_update: Snapshot | None | _Absent = ABSENT


@dataclass(frozen=True, slots=True)
class CallError:
    """The call that failed: step 0 is the constructor; call is create, add('<id>'), schedule, update or run."""

    step: Step0
    call: str
    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class WhiteBoxError:
    """A white-box attribute that exists but is not of its docs/api.md type (a finding, I6)."""

    step: Step1
    call: Literal["schedule", "update"]
    message: str


@dataclass(frozen=True, slots=True)
class Observed:
    """A whole run: the workload (its JSON), every step, how the run stopped, and the final outputs."""

    workload: Annotated[dict[str, Any], Keys(("config", "requests", "sample"))]
    white_box: bool
    note: str | None
    steps: tuple[StepRecord, ...]
    outputs: dict[str, tuple[int, ...]] | None
    stop: Stop
    error: CallError | None
    white_box_error: WhiteBoxError | None

    def to_json(self) -> dict[str, Any]:
        """The trace as docs/trace-format.md writes it."""
        return {"format": FORMAT, "version": VERSION, **_dump(self)}

    @classmethod
    def from_json(cls, obj: object) -> Observed:
        """Read a trace; ObservedError names the first field that is not as the format says, and its value."""
        if not isinstance(obj, dict):
            raise ObservedError(f"an observed trace is a JSON object, got {_shown(obj)}")
        for key, want in (("format", FORMAT), ("version", VERSION)):
            if obj.get(key) != want:
                raise ObservedError(f"$.{key} must be {want!r}, got {_shown(obj.get(key))}: not a schedcheck "
                                    "observed trace of this version (docs/trace-format.md)")
        rest = {k: v for k, v in obj.items() if k not in ("format", "version")}
        try:
            made: Observed = _reader(cls)(rest)  # compiled once per class: a trace of 2,000 steps reads in ms
        except _Bad:
            _load(cls, rest, "$")  # again, slowly, naming the field and the value
            raise ObservedError("$: not an observed trace (docs/trace-format.md)") from None
        return made


def begun(workload: dict[str, Any], white_box: bool, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The observed trace of a run as a driver starts it, as JSON it fills in while the run goes (`steps` is the
    list it appends each step's record to): every driver starts here, so every trace has the same fields."""
    return {"format": FORMAT, "version": VERSION, "workload": workload, "white_box": white_box, "note": None,
            "steps": steps, "outputs": None, "stop": "done", "error": None, "white_box_error": None}


# --- reading and writing ----------------------------------------------------------------------------------------

_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, include_extras=True)
    return _HINTS[cls]


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _dump(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _dump(v) for f in dataclasses.fields(value) if (v := getattr(value, f.name)) is not ABSENT}
    if isinstance(value, tuple):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


class _Bad(Exception):
    """Raised by a compiled reader: the value is not as its class says (_load then finds where, and says so)."""


_READERS: dict[Any, Any] = {}


def _reader(hint: Any) -> Any:
    """A function that reads plain JSON as `hint` says, or raises _Bad; made once per hint."""
    if hint not in _READERS:
        _READERS[hint] = _compile(hint)
    return _READERS[hint]


def _compile(hint: Any) -> Any:  # noqa: C901 - one case per kind of type, as _load and _schema have
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = _hints(hint)
        fields = [(f.name, f.default is ABSENT) for f in dataclasses.fields(hint)]
        known = frozenset(name for name, _ in fields)

        def read_class(value: Any) -> Any:
            if type(value) is not dict or not known.issuperset(value):
                raise _Bad
            kwargs = {}
            for name, optional in fields:
                if name in value:
                    kwargs[name] = _reader(hints[name])(value[name])
                elif not optional:
                    raise _Bad
            return hint(**kwargs)
        return read_class
    if origin is Annotated:
        base, rules = _reader(args[0]), hint.__metadata__

        def read_annotated(value: Any) -> Any:
            made = base(value)
            for rule in rules:
                if (isinstance(rule, Minimum) and made < rule.value) or \
                        (isinstance(rule, Keys) and not all(k in made for k in rule.names)):
                    raise _Bad
            return made
        return read_annotated
    if origin in (Union, types.UnionType):
        none_ok = type(None) in args
        options = [_reader(a) for a in args if a not in (_Absent, type(None))]

        def read_union(value: Any) -> Any:
            if value is None and none_ok:
                return None
            for option in options:
                try:
                    return option(value)
                except _Bad:
                    pass
            raise _Bad
        return read_union
    if origin is Literal:
        allowed = frozenset(args)

        def read_literal(value: Any) -> Any:
            if type(value) is not str or value not in allowed:
                raise _Bad
            return value
        return read_literal
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _reader(args[0])

            def read_array(value: Any) -> Any:
                if type(value) is not list:
                    raise _Bad
                return tuple(map(item, value))
            return read_array
        items = [_reader(a) for a in args]

        def read_tuple(value: Any) -> Any:
            if type(value) is not list or len(value) != len(items):
                raise _Bad
            return tuple(r(v) for r, v in zip(items, value, strict=True))
        return read_tuple
    if origin is dict:
        each = None if args[1] is Any else _reader(args[1])

        def read_object(value: Any) -> Any:
            if type(value) is not dict:
                raise _Bad
            return value if each is None else {k: each(v) for k, v in value.items()}
        return read_object
    if hint in (int, str, bool):
        def read_plain(value: Any) -> Any:
            if type(value) is not hint:
                raise _Bad
            return value
        return read_plain
    raise TypeError(f"observed.py: no reader for {hint!r}")  # a class here with a field of a new kind


def _load(hint: Any, value: object, path: str) -> Any:
    """`value` (plain JSON) as `hint` says, or ObservedError at `path`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise ObservedError(f"{path} must be an object, got {_shown(value)}")
        fields = {f.name: f for f in dataclasses.fields(hint)}
        extra = sorted(set(value) - set(fields))
        if extra:
            raise ObservedError(f"{path}.{_shown(extra[0])[1:-1]} is not a field of {hint.__name__} "
                                "(docs/trace-format.md)")
        hints, kwargs = _hints(hint), {}
        for name, f in fields.items():
            if name not in value:
                if f.default is ABSENT:
                    continue
                raise ObservedError(f"{path}.{name} is missing")
            kwargs[name] = _load(hints[name], value[name], f"{path}.{name}")
        return hint(**kwargs)
    if origin is Annotated:
        made = _load(args[0], value, path)
        for rule in hint.__metadata__:
            if isinstance(rule, Minimum) and made < rule.value:
                raise ObservedError(f"{path} must be at least {rule.value}, got {_shown(value)}")
            if isinstance(rule, Keys) and (missing := [k for k in rule.names if k not in made]):
                raise ObservedError(f"{path}.{missing[0]} is missing")
        return made
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a not in (_Absent, type(None))]
        for option in options:
            try:
                return _load(option, value, path)
            except ObservedError:
                if len(options) == 1:  # its own message says more
                    raise
        raise ObservedError(f"{path} must be {_names(args)}, got {_shown(value)}")
    if origin is Literal:
        if value not in args:
            raise ObservedError(f"{path} must be one of {', '.join(map(repr, args))}, got {_shown(value)}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise ObservedError(f"{path} must be an array, got {_shown(value)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_load(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ObservedError(f"{path} must be an array of {len(args)} items, got {_shown(value)}")
        return tuple(_load(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True)))
    if origin is dict:
        if not isinstance(value, dict):
            raise ObservedError(f"{path} must be an object, got {_shown(value)}")
        if args[1] is Any:
            return value
        return {k: _load(args[1], v, f"{path}[{_shown(k)}]") for k, v in value.items()}
    if hint in (int, str, bool):
        if type(value) is not hint:  # a bool is no int here, as in the schema
            raise ObservedError(f"{path} must be {_names((hint,))}, got {_shown(value)}")
        return value
    raise TypeError(f"observed.py: no reader for {hint!r}")  # a class here with a field of a new kind


def _names(args: tuple[Any, ...]) -> str:
    words = {int: "an integer", str: "a string", bool: "a boolean", type(None): "null"}
    return " or ".join(words.get(a, getattr(a, "__name__", "an array")) for a in args if a is not _Absent)


# --- the schema -----------------------------------------------------------------------------------------------


def json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of an observed trace, made from the classes above."""
    defs: dict[str, Any] = {}
    top = _schema(Observed, defs)
    top["required"] = ["format", "version", *top["required"]]
    top["properties"] = {"format": {"const": FORMAT}, "version": {"const": VERSION}, **top["properties"]}
    del defs["Observed"]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"schedcheck observed trace, version {VERSION}", **top, "$defs": defs}


def _schema(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if hint.__name__ not in defs:
            defs[hint.__name__] = {}  # a placeholder while its fields are made
            hints, props, required = _hints(hint), {}, []
            for f in dataclasses.fields(hint):
                props[f.name] = _schema(hints[f.name], defs)
                if f.default is not ABSENT:
                    required.append(f.name)
            defs[hint.__name__] = {"type": "object", "required": required, "additionalProperties": False,
                                   "properties": props}
        if hint is Observed:
            return dict(defs[hint.__name__])
        return {"$ref": f"#/$defs/{hint.__name__}"}
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not _Absent]
        if len(options) == 1:
            return _schema(options[0], defs)
        return {"oneOf": [_schema(a, defs) for a in options]}
    if hint is type(None):
        return {"type": "null"}
    if origin is Annotated:
        out = _schema(args[0], defs)
        for rule in hint.__metadata__:
            out |= {"minimum": rule.value} if isinstance(rule, Minimum) else {"required": list(rule.names)}
        return out
    if origin is Literal:
        return {"enum": list(args)}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _schema(args[0], defs)}
        return {"type": "array", "prefixItems": [_schema(a, defs) for a in args], "items": False,
                "minItems": len(args)}
    if origin is dict:
        return {"type": "object"} if args[1] is Any else \
            {"type": "object", "additionalProperties": _schema(args[1], defs)}
    return {"type": {int: "integer", str: "string", bool: "boolean"}[hint]}


if __name__ == "__main__":
    print(json.dumps(json_schema(), indent=2))
