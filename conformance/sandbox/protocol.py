"""The parent's reading of the sandbox child's messages: exact types and ranges, or a protocol error.

Every message is one JSON line; docs/sandbox.md shows one example of each. Nothing here trusts the
child: a field of the wrong type, an id the workload does not have, a step out of order, a batch
entry below 1 or a report longer than the step cap is ``Malformed``, which the parent turns into a
protocol error of the submission. The result is the observed trace of docs/trace-format.md, the
same data every driver records, which the checkers read as they read an in-process run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from conformance.observed import OPTIONAL_NAMES, PARTLY, white_box_note
from conformance.retention import KINDS, Kept
from conformance.sandbox.keep import FIELDS, REPORTED, SHOWN_MAX
from conformance.sandbox.readers import broke
from spec.loop import RESAMPLE_SHIFT, STALL_STEPS, Steps

BIG = 1 << 128  # as in the child: the corpus goes past 64 bits; a bound keeps parsing cheap
STATUS_MAX = 64  # characters of a status name
TEXT_MAX = 2000  # characters of an exception message or note
QUEUES = ("waiting", "running", "finished")
NUMBERS = ("blocks_used", "num_preemptions")
NO_REASONS: dict[str, str] = {}  # a row whose every field was read
ALL_QUEUES, QUEUE_SET = list(QUEUES), frozenset(QUEUES)  # a snapshot's "same" when no queue changed
CALLS = frozenset({"create", "schedule", "update"})  # and "add(<repr of an added seq_id>)"
STOPS = ("done", "bound", "error")
PARENT_KINDS = ("CallTimeout",)  # error kinds only the parent gives (conformance/grading/observe.py): a run out of time
# is inconclusive where instances are compared, so a child that named its own error so would skip the comparison
UNREADABLE = "cannot read "  # as in the child: the attribute is there but its contents cannot be read
NONE: list[str] = []  # no arrivals, no queues kept: never changed


def clean(text: str) -> str:
    """The text with anything UTF-8 cannot encode (a lone surrogate from a JSON escape) replaced by '?': every
    file grading writes is UTF-8, and a child's text must never make writing them fail."""
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


class Malformed(ValueError):
    """A child message that does not follow the protocol; the submission is blamed."""


@dataclass(frozen=True, slots=True)
class Decoded:
    """A validated trace message: the observed trace's steps, how the run stopped, and what white box showed.

    ``steps`` are step records of docs/trace-format.md ("Observed trace"), snapshots rebuilt whole
    from the child's changes (an unchanged row is the same dict as before: the steps are read-only).
    """

    steps: tuple[dict[str, Any], ...]
    stop: str  # "done", "bound" or "error"
    error: dict[str, Any] | None  # {"step", "call", "kind", "message"} when stop is "error"
    note: str | None  # white-box checks skipped, wholly or partly, and why (an attribute missing or unreadable)
    white_box_error: dict[str, Any] | None  # {"step", "call", "message"}: a container that cannot be read (I6)
    notes: tuple[str, ...] = ()  # values read although not of docs/api.md's types: notes, never findings
    kept: tuple[Kept, ...] | None = None  # what changed in the returned values by the end of a run that ended done
    beside: Decoded | None = None  # a two-instance probe: the second instance's trace (black box)
    group: tuple[Decoded, ...] = ()  # a group's other schedulers, alive at once: their traces (black box)
    outputs: dict[str, list[int]] | None = None  # every sequence's last output read (white box), though another
    # field could not be read: the final outputs are a black-box observable (docs/api.md)


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


def pairs(value: Any, where: str) -> list[list[Any]]:
    """schedule()'s [seq_id, n] pairs, as sent (each a fresh list of the parsed message). An id never added and an
    n <= 0 are what the scheduler returned, not a malformed report: the checks judge them (H.unknown_id,
    H.nonpositive, I2), as they do in `check`."""
    if type(value) is not list:
        raise Malformed(f"{where} must be a list of [seq_id, int] pairs")
    for item in value:
        if (type(item) is not list or len(item) != 2 or type(item[0]) is not str or type(item[1]) is not int
                or not -BIG < item[1] < BIG):
            raise Malformed(f"{where} holds {str(item)[:80]}; expected [seq_id, int]")
    return value


def opt_int(obj: Mapping[str, Any], key: str, where: str) -> int | None:
    return get(obj, key, int, where) if key in obj else None


def number(obj: Mapping[str, Any], key: str, where: str) -> int | None:
    """opt_int, with the usual case (an int in range, or absent) decided without get()."""
    value = obj.get(key)
    if type(value) is int and -BIG < value < BIG or value is None and key not in obj:
        return value
    return opt_int(obj, key, where)  # raises, naming the field


Row = tuple[list[Any], dict[str, Any] | None]  # the row as sent, whole, and its observed-trace form (None: unreadable)


def seq_row(seq_id: str, row: Any, snapshot_where: str, before: Row | None) -> Row:
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
    old = before[0][4] if before is not None else None
    if type(kept) is not int or not 0 <= kept <= (len(old) if old is not None else 0) or (kept and output is None):
        raise Malformed(f"{here()}: kept must count tokens of the output sent before, got {str(kept)[:40]}")
    if output is not None:
        if type(output) is not list or any(type(t) is not int or not -BIG < t < BIG for t in output):
            raise Malformed(f"{here()}: output must be a list of ints or null")
        output = old[:kept] + output if kept and old is not None else output
    status = None if status is None else clean(status)
    whole = [num_computed, num_tokens, num_blocks, status, output]
    readable = num_computed is not None and output is not None  # the rest may be null (observed.OPTIONAL_FIELDS)
    return whole, ({"num_computed": num_computed, "num_tokens": num_tokens, "num_blocks": num_blocks,
                    "status": status, "output": output} if readable else None)


def reasons(value: Any, where: str) -> dict[str, str]:
    if type(value) is dict and not value:
        return {}
    if type(value) is not dict or any(type(v) is not str or len(v) > TEXT_MAX or len(k) > 200
                                      for k, v in value.items()):
        raise Malformed(f"{where} must map names to short strings")
    return {clean(k): clean(v) for k, v in value.items()}


class Snapshots:
    """The white-box state of one workload as the child's snapshots change it (they send changes only)."""

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.rows: dict[str, Row] = {}  # the latest row of every added sequence
        self.row_missing: dict[str, dict[str, str]] = {}  # only sequences with unreadable fields
        self.queues: dict[str, list[str]] = {}  # the latest of each queue read
        self.seqs: dict[str, dict[str, Any]] | None = None  # the observed form of rows, while none changed
        self.note: str | None = None
        self.missing: dict[str, str] = {}  # the reasons of the attributes last reported missing
        self.white_box_error: dict[str, Any] | None = None
        # what the judged snapshots read: the Scheduler's names, and each sequence with the fields it lacked; one of
        # these that cannot be read after that broke (readers.broke); one never read is missing, a note, as in
        # check's adapter (a sequence added later may lack a field it gets on first use)
        self.read_names: set[str] = set()
        self.read_seqs: dict[str, frozenset[str]] = {}  # each sequence a judged snapshot read, and the fields it lacked
        self.texts: list[str] = []  # every reason text the child sent in this workload, in order (readers.told)

    def read(self, value: Any, where: str, step: int, call: str) -> dict[str, Any] | None:
        """Validate one snapshot message; its observed-trace form, or None when something was unreadable."""
        if type(value) is not dict:
            raise Malformed(f"{where} must be an object")
        # sent when it changed: absent, the reasons last sent still hold (none at first)
        missing = reasons(value["missing"], f"{where}.missing") if "missing" in value else self.missing
        self.missing = missing
        sent, sent_missing = value.get("seqs"), value.get("seq_missing")
        if type(sent) is not dict or type(sent_missing) is not dict or not sent_missing.keys() <= sent.keys():
            raise Malformed(f"{where}: seqs and seq_missing must be objects keyed by sent seq_ids")
        changed = False  # a row sent again unchanged keeps its objects: the observed form is not rebuilt for it
        for seq_id, row in sent.items():
            if seq_id not in self.known:
                raise Malformed(f"{where}.seqs holds {seq_id[:40]!r}, which is not an added seq_id")
            before = self.rows.get(seq_id)
            now = seq_row(seq_id, row, where, before)
            if before is None or now[0] != before[0]:
                self.rows[seq_id], changed = now, True
            if seq_id in sent_missing:
                self.row_missing[seq_id] = self.told(sent_missing[seq_id], f"{where}.seq_missing[{seq_id!r}]")
            elif None not in now[0]:
                self.row_missing.pop(seq_id, None)
            elif seq_id not in self.row_missing:  # null fields, their reasons as last sent: none were
                raise Malformed(f"{where}.seqs[{seq_id!r}] has null fields and seq_missing never gave their reasons")
        if len(self.rows) != len(self.known):
            raise Malformed(f"{where}: a sequence appeared without its first row")
        same = value.get("same", NONE)
        if same == ALL_QUEUES and len(self.queues) == len(QUEUES) and not value.keys() & QUEUE_SET:
            pass  # every queue as before: the usual snapshot of a run that goes on
        else:
            if type(same) is not list or any(q not in QUEUES or q in value or q not in self.queues for q in same):
                raise Malformed(f"{where}.same must list queues sent before and not sent now")
            for q in QUEUES:
                if q in value:
                    self.queues[q] = list(ids(value[q], self.known, f"{where}.{q}"))
                elif q not in same:
                    self.queues.pop(q, None)
        numbers = [number(value, name, where) for name in NUMBERS]
        if changed:
            self.seqs = None
        if self.seqs is None:
            made = {i: self.rows[i][1] for i in sorted(self.rows)}
            self.seqs = cast("dict[str, dict[str, Any]]", made) if None not in made.values() else None
        judged = self.seqs is not None and all(q in self.queues for q in QUEUES if q not in OPTIONAL_NAMES)
        # the reasons, read when the child sent new ones (a field that broke, or is there and unreadable, comes with
        # them) or the note still has to say them: a field every sequence lacks would sort them at every call
        told_now = "missing" in value or bool(sent_missing)
        noting = self.note is None or not judged and self.note.startswith(PARTLY)
        why = (sorted(missing.items()) + sorted((f"{i}.{k}", v) for i, r in self.row_missing.items()
                                                for k, v in r.items())) \
            if (told_now or noting) and (missing or self.row_missing) else []
        wrong = next((w for _, w in why if w.startswith(UNREADABLE)), None) if why and self.white_box_error is None \
            else None
        if wrong is None and why and self.white_box_error is None:  # there before, broken now
            gone = next(((a, w) for a, w in why if a in self.read_names or self.had(a)), None)
            wrong = broke(gone[1], gone[0]) if gone is not None else None
        if wrong is not None:
            self.white_box_error = {"step": step, "call": call, "message": wrong}
        if why and noting:
            self.note = white_box_note(", ".join(f"{a} ({w})" for a, w in why), judged)
        if not judged:
            if self.note is None:
                self.note = white_box_note("unreadable", judged)
            return None
        assert self.seqs is not None
        self.read_names.update(name for name, got in zip(NUMBERS, numbers, strict=True) if got is not None)
        self.read_names.update(self.queues)
        if len(self.read_seqs) < len(self.rows):
            for seq_id in self.rows.keys() - self.read_seqs.keys():
                self.read_seqs[seq_id] = frozenset(self.row_missing.get(seq_id, ()))
        for seq_id in sent:  # a field a sequence lacked and has now is read: gone again later, it broke
            lacked = self.read_seqs.get(seq_id)
            if lacked and len(lacked) > len(still := self.row_missing.get(seq_id, NO_REASONS)):
                self.read_seqs[seq_id] = lacked.intersection(still)
        return {"blocks_used": numbers[0], "num_preemptions": numbers[1], "waiting": self.queues["waiting"],
                "running": self.queues["running"], "finished": self.queues.get("finished"), "seqs": self.seqs}

    def told(self, value: Any, where: str) -> dict[str, str]:
        """A sequence's reasons as sent (readers.told): each a text, the first time in the workload, or the index
        of that first time."""
        if type(value) is not dict:
            raise Malformed(f"{where} must be an object")
        out = {}
        for name, why in value.items():  # in order: a text sent first in this very object has its index after it
            if type(why) is int and 0 <= why < len(self.texts):
                text = self.texts[why]
            elif type(why) is str:
                text = reasons({name: why}, where)[clean(name)]
                self.texts.append(text)
            else:
                raise Malformed(f"{where} must map names to short strings or to the index of one sent before")
            if len(name) > 200:
                raise Malformed(f"{where} must map names to short strings")
            out[clean(name)] = text
        return out

    def had(self, field: str) -> bool:
        """Whether `field` ("<seq_id>.<name>") was read in a snapshot that was judged."""
        seq_id, dot, name = field.rpartition(".")
        lacked = self.read_seqs.get(seq_id) if dot else None
        return lacked is not None and name not in lacked


def call_error(value: Any, known: set[str], where: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise Malformed(f"{where} must be an object")
    kind, call = get(value, "kind", str, where)[:200], get(value, "call", str, where)
    if call not in CALLS and not (call.startswith("add(") and call[4:-1] in {repr(i) for i in known}):
        raise Malformed(f"{where}.call is {call[:40]!r}; see docs/trace-format.md")
    if kind in PARENT_KINDS:  # a time-out is the parent's to say, from its own limits: told by a child, it was raised
        kind = f"{kind} (raised)"
    return {"step": get(value, "step", int, where), "call": call, "kind": kind,
            "message": get(value, "message", str, where)}


def stalled(workload: Mapping[str, Any], steps: list[dict[str, Any]]) -> bool:
    """Whether these steps end the run as stalled, by the rule the child's loop applied (spec/loop.py Steps)."""
    run: Steps[Mapping[str, Any]] = Steps(workload["requests"], lambda r: r["arrival"], lambda r: r["seq_id"],
                                          len(steps))
    for s in steps:
        run.next()
        run.finished(s["finished"], bool(s["schedule"]))
    return run.stalled


def trace(message: Mapping[str, Any], workload: Mapping[str, Any], step_cap: int, white_box: bool,
          resample: bool = False) -> Decoded:
    """Validate a trace message against its workload, or raise Malformed.

    One pass over the steps, in order, because each step is checked against what the earlier ones
    added and finished. `resample`: the run was a resample probe, whose model shifts a token by
    RESAMPLE_SHIFT per earlier sample of its position."""
    stop = get(message, "stop", str, "trace")
    if stop not in STOPS:
        raise Malformed(f"trace.stop is {stop[:40]!r}; expected 'done', 'bound' or 'error'")
    raw = get(message, "steps", list, "trace")
    if len(raw) > step_cap:
        raise Malformed(f"trace has {len(raw)} steps, more than the step cap {step_cap}")
    arrivals: dict[int, list[str]] = {}
    for r in workload["requests"]:
        arrivals.setdefault(r["arrival"], []).append(r["seq_id"])
    every = {r["seq_id"] for r in workload["requests"]}
    tokens = {r["seq_id"]: workload["sample"]["base"][r["seq_id"]] for r in workload["requests"]}
    eos_at = {k: set(v) for k, v in workload["sample"].get("eos_at", {}).items()}
    eos = workload["config"]["eos"]
    known: set[str] = set()
    done: set[str] = set()
    times: dict[tuple[str, int], int] | None = {} if resample else None
    snaps = Snapshots(known)
    steps = []
    for i, s in enumerate(raw, start=1):
        where = f"trace.steps[{i - 1}]"
        if (type(s) is not dict or s.get("step") != i or type(s["step"]) is not int) and (
                type(s) is not dict or get(s, "step", int, where) != i):  # get() names what is wrong
            raise Malformed(f"{where} must be an object with step == {i}")
        partial = "finished" not in s  # only the last step, when one of its calls failed
        if partial and (stop != "error" or i != len(raw)):
            raise Malformed(f"{where} is incomplete, but it is not the step whose call failed")
        due = arrivals.get(i, NONE)
        sent_added = s.get("added")
        added = [] if sent_added == [] else list(ids(sent_added, frozenset(due), f"{where}.added"))
        if added != due[:len(added)] or (not partial and len(added) != len(due)):
            raise Malformed(f"{where}.added is {added} but the workload adds {list(due)}")
        known.update(added)
        record: dict[str, Any] = {"step": i, "added": added}
        steps.append(record)
        if "schedule" not in s and not partial:
            raise Malformed(f"{where} has no schedule")
        if "schedule" in s:
            batch = pairs(s["schedule"], f"{where}.schedule")
            if len(batch) > 1 and len({seq_id for seq_id, _ in batch}) != len(batch):
                raise Malformed(f"{where}.schedule names a seq_id twice")
            record["schedule"] = batch
            if white_box:
                record["after_schedule"] = snaps.read(s.get("after_schedule"), f"{where}.after_schedule", i,
                                                      "schedule")
        if partial:
            break
        record["sampled"] = sample_calls(s.get("sampled"), known, f"{where}.sampled", tokens, eos_at, eos, times)
        record["finished"] = list(ids(s.get("finished"), known, f"{where}.finished"))
        if white_box:
            record["after_update"] = snaps.read(s.get("after_update"), f"{where}.after_update", i, "update")
        done.update(record["finished"])
    error = None
    if stop == "done":
        if message.get("error") is not None or not every <= done or len(known) != len(every):
            raise Malformed("trace says 'done' but not every request was added and reported finished")
    elif stop == "bound":
        if (len(raw) != step_cap and not stalled(workload, steps)) or message.get("error") is not None:
            raise Malformed(f"trace says 'bound' after {len(raw)} steps; the cap is {step_cap}, and its last "
                            f"{STALL_STEPS} steps are not all empty batches after the last arrival")
    else:
        error = call_error(message.get("error"), every, "trace.error")
        last_partial = bool(steps) and "finished" not in steps[-1]
        if not (error["step"] == len(raw) if last_partial else error["step"] == len(raw) + 1
                or error["step"] == len(raw) == 0):
            raise Malformed(f"trace.error.step is {error['step']} after {len(raw)} steps")
    notes = reasons(message.get("notes", {}), "trace.notes")  # "attribute:type" -> its note
    found = None
    if "kept" in message:
        if stop != "done":
            raise Malformed(f"trace.kept is sent only for a run that ended 'done', not {stop!r}")
        found = kept(message["kept"], len(steps))
    outputs = {i: snaps.rows[i][0][4] for i in sorted(snaps.rows)} if white_box else None
    return Decoded(tuple(steps), stop, error, snaps.note, snaps.white_box_error, tuple(notes.values()), found,
                   outputs=outputs if outputs and None not in outputs.values() else None)


def kept(value: Any, steps: int, where: str = "trace.kept") -> tuple[Kept, ...]:
    """Validate what the end of a run showed about the returned values (conformance/sandbox/keep.py reports it,
    in `check`'s adapter too): at most REPORTED things, each at a step of the run, every value plain and bounded."""
    if type(value) is not list or len(value) > REPORTED:
        raise Malformed(f"{where} must be a list of at most {REPORTED} objects")
    found = []
    for i, item in enumerate(value):
        w = f"{where}[{i}]"
        if type(item) is not dict:
            raise Malformed(f"{w} must be an object")
        step, call, kind = get(item, "step", int, w), get(item, "call", str, w), get(item, "kind", str, w)
        if not 1 <= step <= steps or call not in ("schedule", "update") or kind not in KINDS:
            raise Malformed(f"{w} names step {step} of {steps}, call {call[:20]!r}, kind {kind[:20]!r}; see "
                            "docs/sandbox.md")
        found.append(kept_item(item, step, call, kind, w))
    return tuple(found)


def kept_item(item: dict[str, Any], step: int, call: str, kind: str, where: str) -> Kept:
    """The fields of one kind of Kept, each checked; the fields another kind has are refused."""
    allowed = {"step", "call", "kind", *{"aliased": ("earlier",), "changed": ("then", "now"), "replaced": ("seq",),
                                         "field": ("seq", "field", "then", "now")}[kind]}
    if set(item) != allowed:
        raise Malformed(f"{where}: a {kind!r} item has exactly the fields {sorted(allowed)}")
    if kind == "aliased":
        earlier = item["earlier"]
        if (type(earlier) is not list or len(earlier) != 2 or type(earlier[0]) is not int
                or not 1 <= earlier[0] <= step or earlier[1] not in ("schedule", "update")):
            raise Malformed(f"{where}.earlier must be [an earlier step, 'schedule' or 'update']")
        return Kept(step, call, kind, earlier=(earlier[0], earlier[1]))
    if kind in ("replaced", "field") and call != "update":
        raise Malformed(f"{where}: only update() returns Sequences")
    if kind == "field" and item["field"] not in FIELDS:
        raise Malformed(f"{where}.field must be one of {', '.join(FIELDS)}")
    return Kept(step, call, kind, shown(item.get("then"), f"{where}.then"), shown(item.get("now"), f"{where}.now"),
                seq=shown(item.get("seq"), f"{where}.seq", 0), field=item.get("field"))


def shown(value: Any, where: str, depth: int = 2) -> Any:
    """A value shown as plain data: None, an int in range, a short str, or (to `depth` levels) a bounded list."""
    if value is None or type(value) is int and -BIG < value < BIG:
        return value
    if type(value) is str and len(value) <= TEXT_MAX:
        return clean(value)
    if type(value) is list and depth and len(value) <= SHOWN_MAX + 1:
        return [shown(v, where, depth - 1) for v in value]
    raise Malformed(f"{where} must be plain data: null, an int, a short string or a short list of them")


def sample_calls(value: Any, known: set[str], where: str, base: dict[str, int], eos_at: dict[str, set[int]],
                 eos: int | None, times: dict[tuple[str, int], int] | None = None) -> list[list[Any]]:
    """Validate [seq_id, len(output), token] calls: each token must be the one the driver's model returns
    (`times`: the samples of each position so far, in a resample probe; updated here)."""
    if type(value) is not list:
        raise Malformed(f"{where} must be a list of [seq_id, int, int] calls")
    for item in value:
        if (type(item) is not list or len(item) != 3 or type(item[0]) is not str or item[0] not in known
                or type(item[1]) is not int or not 0 <= item[1] < BIG or type(item[2]) is not int):
            raise Malformed(f"{where} holds {str(item)[:80]}; expected [added seq_id, int >= 0, token]")
        seq_id, k, token = item
        model = eos if k in eos_at.get(seq_id, ()) else base[seq_id] + k
        if times is not None:
            again = times.get((seq_id, k), 0)
            times[seq_id, k] = again + 1
            if again and model is not None:
                model += RESAMPLE_SHIFT * again
        if token != model:
            raise Malformed(f"{where}: token {str(token)[:40]} for {seq_id!r} at {k} is not the model's")
    return value
