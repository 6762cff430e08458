"""The parent's reading of the sandbox child's messages: exact types and ranges, or a protocol error.

Every message is one JSON line; docs/sandbox.md shows one example of each. Nothing here trusts the
child: a field of the wrong type, an id the workload does not have, a step out of order, a batch
entry below 1 or a report longer than the step cap is ``Malformed``, which the parent turns into a
protocol error of the submission. The result is typed, frozen data (ObservedStep, Snapshot) that
checkers can compare with the reference model's trace without touching the submission.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

BIG = 1 << 128  # as in the child: the corpus goes past 64 bits; a bound keeps parsing cheap
STATUS_MAX = 64  # characters of a status name
TEXT_MAX = 2000  # characters of an exception message or note
QUEUES = ("waiting", "running", "finished")
CALLS = frozenset({"Scheduler()", "Sequence()", "add", "schedule", "update", "snapshot", "sample_fn"})


def clean(text: str) -> str:
    """The text with anything UTF-8 cannot encode (a lone surrogate from a JSON escape) replaced by '?'.

    Every file grading writes is UTF-8; a child's text must never make writing them fail.
    """
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


class Malformed(ValueError):
    """A child message that does not follow the protocol; the submission is blamed."""


@dataclass(frozen=True, slots=True)
class SeqView:
    """One sequence as the submission's object showed it; None where the attribute was unreadable."""

    seq_id: str
    num_computed: int | None
    num_tokens: int | None
    num_blocks: int | None
    status: str | None  # the status enum member's name
    output: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """White-box view after one call; an attribute that could not be read is None and named in missing."""

    blocks_used: int | None
    num_preemptions: int | None
    waiting: tuple[str, ...] | None  # head first
    running: tuple[str, ...] | None
    finished: tuple[str, ...] | None
    seqs: tuple[SeqView, ...]  # every added sequence, in seq_id order
    missing: tuple[tuple[str, str], ...]  # (attribute, why), e.g. ("blocks_used", "AttributeError: ...")


@dataclass(frozen=True, slots=True)
class ObservedStep:
    """One schedule() + update() pair as the child observed it."""

    step: int  # from 1
    added: tuple[str, ...]  # requests added just before this schedule()
    schedule: tuple[tuple[str, int], ...]  # schedule()'s dict as (seq_id, n) in its own order
    finished: tuple[str, ...]  # seq_ids of update()'s result, in its order
    sample_calls: tuple[tuple[str, int], ...]  # (seq_id, len(output) at the call), in call order
    after_schedule: Snapshot | None
    after_update: Snapshot | None


@dataclass(frozen=True, slots=True)
class CallError:
    """The submission raised, or gave back a value of the wrong shape, during one call."""

    kind: str  # "exception" or "protocol"
    step: int  # 0: while constructing the Scheduler
    call: str  # one of CALLS
    exc_type: str  # e.g. "ZeroDivisionError", "SystemExit", "ProtocolError"
    message: str


def parse_line(line: bytes) -> dict[str, Any]:
    """Decode one JSON line of plain data: no floats or NaN; an object at the top."""

    def no_float(text: str) -> float:
        raise Malformed(f"a float ({text}) appears in a message; the protocol has only ints")

    try:
        obj = json.loads(line, parse_float=no_float, parse_constant=no_float)
    except (ValueError, RecursionError) as e:
        raise Malformed(f"a message is not valid JSON: {str(e)[:200]}") from None
    if type(obj) is not dict or type(obj.get("type")) is not str:
        raise Malformed("a message must be a JSON object with a string field 'type'")
    return obj


def get(obj: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in obj:
        raise Malformed(f"{where}: missing field {key!r}")
    value: Any = obj[key]
    if type(value) is not kind:
        raise Malformed(f"{where}.{key} must be {kind.__name__}, got {type(value).__name__}")
    value = obj[key]  # mypy narrows to object above; the type is checked
    if kind is int and not -BIG < value < BIG:
        raise Malformed(f"{where}.{key} = {value} is out of range")
    if kind is str and len(value) > TEXT_MAX:
        raise Malformed(f"{where}.{key} is longer than {TEXT_MAX} characters")
    return clean(value) if kind is str else value


def ids(value: Any, known: frozenset[str] | set[str], where: str) -> tuple[str, ...]:
    if type(value) is not list:
        raise Malformed(f"{where} must be a list of seq_ids")
    try:
        fine = known.issuperset(value)  # known holds only str, so an int, bool or null is never in it
    except TypeError:  # an unhashable item (a list or an object)
        fine = False
    if not fine:
        bad = next((item for item in value if type(item) is not str or item not in known), None)
        raise Malformed(f"{where} holds {str(bad)[:40]!r}, which is not an added seq_id")
    return tuple(value)


def pairs(value: Any, known: set[str], where: str, low: int) -> tuple[tuple[str, int], ...]:
    if type(value) is not list:
        raise Malformed(f"{where} must be a list of [seq_id, int] pairs")
    out = []
    for item in value:
        if (type(item) is not list or len(item) != 2 or type(item[0]) is not str or type(item[1]) is not int
                or item[0] not in known or not low <= item[1] < BIG):
            raise Malformed(f"{where} holds {str(item)[:80]}; expected [added seq_id, int >= {low}]")
        out.append((item[0], item[1]))
    return tuple(out)


def opt_int(obj: Mapping[str, Any], key: str, where: str) -> int | None:
    return get(obj, key, int, where) if key in obj else None


def seq_view(seq_id: str, row: Any, snapshot_where: str, before: SeqView | None) -> SeqView:
    """Validate one row [num_computed, num_tokens, num_blocks, status, tail, kept]; null marks an unreadable
    field. The output is the first `kept` tokens of the sequence's output in `before` (its last row), then tail."""
    def here() -> str:  # made only for a message
        return f"{snapshot_where}.seqs[{seq_id!r}]"

    if type(row) is not list or len(row) != 6:
        raise Malformed(f"{here()} must be a list of 6 fields")
    num_computed, num_tokens, num_blocks, status, output, kept = row
    for value in (num_computed, num_tokens, num_blocks):
        if value is not None and (type(value) is not int or not -BIG < value < BIG):
            raise Malformed(f"{here()} holds {str(value)[:40]} where an int or null belongs")
    if status is not None and (type(status) is not str or len(status) > STATUS_MAX):
        raise Malformed(f"{here()}: status must be a string of at most {STATUS_MAX} characters or null")
    old = before.output if before is not None else None
    if type(kept) is not int or not 0 <= kept <= (len(old) if old is not None else 0) or (kept and output is None):
        raise Malformed(f"{here()}: kept must count tokens of the output sent before, got {str(kept)[:40]}")
    if output is not None:
        if type(output) is not list or any(type(t) is not int or not -BIG < t < BIG for t in output):
            raise Malformed(f"{here()}: output must be a list of ints or null")
        output = old[:kept] + tuple(output) if kept and old is not None else tuple(output)
    return SeqView(seq_id, num_computed, num_tokens, num_blocks, None if status is None else clean(status), output)


def reasons(value: Any, where: str) -> dict[str, str]:
    if type(value) is dict and not value:
        return {}
    if type(value) is not dict or any(type(v) is not str or len(v) > TEXT_MAX or len(k) > 200
                                      for k, v in value.items()):
        raise Malformed(f"{where} must map names to short strings")
    return {clean(k): clean(v) for k, v in value.items()}


def snapshot(value: Any, known: set[str], where: str, rows: dict[str, SeqView],
             row_missing: dict[str, dict[str, str]], last: dict[str, tuple[str, ...]], order: list[str]) -> Snapshot:
    """Validate a white-box snapshot; rows and queues not sent are carried forward from ``rows`` and ``last``
    (both updated in place; a queue named in "same" is the one last sent, the same tuple); ``order`` holds
    the seq_ids of ``rows`` sorted, kept up to date here.

    ``row_missing`` keeps only sequences with unreadable fields, so the common case costs nothing.
    """
    if type(value) is not dict:
        raise Malformed(f"{where} must be an object")
    missing = reasons(value.get("missing"), f"{where}.missing")
    sent, sent_missing = value.get("seqs"), value.get("seq_missing")
    if type(sent) is not dict or type(sent_missing) is not dict or not set(sent_missing) <= set(sent):
        raise Malformed(f"{where}: seqs and seq_missing must be objects keyed by sent seq_ids")
    for seq_id, row in sent.items():
        if seq_id not in known:
            raise Malformed(f"{where}.seqs holds {seq_id[:40]!r}, which is not an added seq_id")
        rows[seq_id] = seq_view(seq_id, row, where, rows.get(seq_id))
        if seq_id in sent_missing:
            row_missing[seq_id] = reasons(sent_missing[seq_id], f"{where}.seq_missing[{seq_id!r}]")
        else:
            row_missing.pop(seq_id, None)
    if len(rows) != len(known):
        raise Malformed(f"{where}: a sequence appeared without its first row")
    same = value.get("same", [])
    if type(same) is not list or any(q not in QUEUES or q in value or q not in last for q in same):
        raise Malformed(f"{where}.same must list queues sent before and not sent now")
    for q in QUEUES:
        if q in value:
            last[q] = ids(value[q], known, f"{where}.{q}")
        elif q not in same:
            last.pop(q, None)
    queues = [last.get(q) for q in QUEUES]
    why = tuple(sorted(missing.items()))
    if row_missing:
        why += tuple(sorted((f"{i}.{k}", v) for i, r in row_missing.items() for k, v in r.items()))
    if len(order) != len(rows):  # a sequence was added: its row was sent, so every other row is known
        order[:] = sorted(rows)
    return Snapshot(opt_int(value, "blocks_used", where), opt_int(value, "num_preemptions", where),
                    queues[0], queues[1], queues[2], tuple([rows[i] for i in order]), why)


def call_error(value: Any, where: str) -> CallError:
    if type(value) is not dict:
        raise Malformed(f"{where} must be an object")
    kind, call = get(value, "kind", str, where), get(value, "call", str, where)
    if kind not in ("exception", "protocol") or call not in CALLS:
        raise Malformed(f"{where} has kind {kind[:40]!r} and call {call[:40]!r}; see docs/sandbox.md")
    step = get(value, "step", int, where)
    return CallError(kind, step, call, get(value, "exc_type", str, where)[:200], get(value, "message", str, where))


def trace(message: Mapping[str, Any], workload: Mapping[str, Any], step_cap: int, white_box: bool
          ) -> tuple[tuple[ObservedStep, ...], str, CallError | None]:
    """Validate a trace message against its workload: (steps, end, error), or raise Malformed."""
    end = get(message, "end", str, "trace")
    raw = get(message, "steps", list, "trace")
    if len(raw) > step_cap:
        raise Malformed(f"trace has {len(raw)} steps, more than the step cap {step_cap}")
    arrivals: dict[int, list[str]] = {}
    for r in workload["requests"]:
        arrivals.setdefault(r["arrival"], []).append(r["seq_id"])
    known: set[str] = set()
    done: set[str] = set()
    rows: dict[str, SeqView] = {}  # the latest row of every added sequence (snapshots send changes only)
    row_missing: dict[str, dict[str, str]] = {}
    queues: dict[str, tuple[str, ...]] = {}  # the latest of each queue (snapshots send changes only)
    order: list[str] = []  # the seq_ids of rows, sorted
    steps = []
    for i, s in enumerate(raw, start=1):
        where = f"trace.steps[{i - 1}]"
        if type(s) is not dict or get(s, "step", int, where) != i:
            raise Malformed(f"{where} must be an object with step == {i}")
        added = ids(s.get("added"), frozenset(arrivals.get(i, ())), f"{where}.added")
        if list(added) != arrivals.get(i, []):
            raise Malformed(f"{where}.added is {list(added)} but the workload adds {arrivals.get(i, [])}")
        known.update(added)
        batch = pairs(s.get("schedule"), known, f"{where}.schedule", 1)
        if len({seq_id for seq_id, _ in batch}) != len(batch):
            raise Malformed(f"{where}.schedule names a seq_id twice")
        finished = ids(s.get("finished"), known, f"{where}.finished")
        calls = pairs(s.get("sample_calls"), known, f"{where}.sample_calls", 0)
        snaps = [snapshot(s.get(k), known, f"{where}.{k}", rows, row_missing, queues, order) if white_box else None
                 for k in ("after_schedule", "after_update")]
        steps.append(ObservedStep(i, added, batch, finished, calls, *snaps))
        done.update(finished)
    error = None
    if end == "finished":
        every = {r["seq_id"] for r in workload["requests"]}
        if message.get("error") is not None or not every <= done or len(known) != len(every):
            raise Malformed("trace says 'finished' but not every request was added and reported finished")
    elif end == "step_cap":
        if len(raw) != step_cap or message.get("error") is not None:
            raise Malformed(f"trace says 'step_cap' after {len(raw)} steps; the cap is {step_cap}")
    elif end == "error":
        error = call_error(message.get("error"), "trace.error")
        if error.step != len(raw) + 1 and not error.step == len(raw) == 0:
            raise Malformed(f"trace.error.step is {error.step} after {len(raw)} complete steps")
    else:
        raise Malformed(f"trace.end is {end[:40]!r}; expected 'finished', 'step_cap' or 'error'")
    return tuple(steps), end, error
