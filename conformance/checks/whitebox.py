"""White box: I1..I6 on the submission's own state after every call, then every observable field against the spec.

After each call the snapshot is first judged by the invariants (a violation is named
by the most specific invariant, see PRECEDENCE); when none is violated and the
batches so far equal the spec's, every field the snapshot exposes (the queues in
order, blocks_used, num_preemptions, and each sequence's num_computed, num_tokens,
num_blocks, status and output, finished sequences included) is compared with the
spec's state after the same call.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from operator import itemgetter
from typing import Any

from conformance.checks.checkers import Finding, expected_trace
from conformance.observed import OPTIONAL_FIELDS
from spec.invariants import Violation, check_all_finished, check_state, check_step
from spec.model import Config, Seq, State, Status
from spec.trace import Workload, snapshot_to_json

# When several invariants break at one call, the first matching row names the finding.
# (invariant, kind): kind "" matches any violation of that invariant.
PRECEDENCE: tuple[tuple[str, str], ...] = (
    ("I6", "status"),  # status contradicts the queue: I4/I5/I1 infer "preempted"/"finished" from status
    ("I6", "queue"),  # a sequence in two queues: every per-queue count after it is a consequence
    ("I4", ""),  # output lost: the cause, while I3/I1 report its arithmetic echoes
    ("I5", ""),
    ("I1", ""),
    ("I2", ""),
    ("I6", ""),  # max_num_seqs exceeded
    ("I3", ""),
)
STATUSES = {s.name for s in Status}
FIELD_RULES = {"waiting": "I5", "running": "I6", "finished": "U.finish", "blocks_used": "I1",
               "num_preemptions": "P1.preempt", "num_computed": "I3", "num_tokens": "I3", "num_blocks": "I1",
               "status": "I6"}  # the rule a differing field belongs to (output: I4 if tokens were lost, else U.sample)


def kind(v: Violation) -> str:
    """The PRECEDENCE kind of a violation: 'status', 'queue' or ''."""
    if v.invariant == "I6" and v.expected in STATUSES and v.actual in STATUSES:
        return "status"
    if v.invariant == "I6" and v.expected == "one queue":
        return "queue"
    return ""


def rank(v: Violation) -> int:
    """The row of PRECEDENCE that names `v` (smaller is more specific)."""
    return next((i for i, (inv, k) in enumerate(PRECEDENCE) if inv == v.invariant and k in ("", kind(v))),
                len(PRECEDENCE))


def most_specific(violations: list[Violation]) -> Violation:
    """The violation that names the finding: the first by PRECEDENCE, ties in check order."""
    return min(violations, key=rank)


def to_state(config: Config, requests: dict[str, tuple[int, int]], snap: Mapping[str, Any],
             pending: list[list[Any]] | None = None, made: dict[str, tuple[Any, Seq]] | None = None) -> State:
    """Rebuild a spec State from a snapshot, so the spec's invariant checks can judge it.

    A value the submission does not give (null: conformance.observed.OPTIONAL_NAMES, OPTIONAL_FIELDS) is
    filled in with what the rules derive from the rest, so that the invariants that read it hold and every
    other one is judged on the submission's own values: a status from the queue the sequence is in (neither
    waiting nor running: finished), a num_blocks as I1's exact count for a running sequence and 0 for any
    other, blocks_used as the running sequences' sum, finished as every sequence in neither other queue, in
    request order, and num_preemptions as 0 (no invariant reads it).

    `made`: the Seq last built for each sequence, with the row it was built from, within one observed
    trace. A trace read from the sandbox keeps an unchanged row as the same (read-only) dict from one
    snapshot to the next (conformance.sandbox.protocol), and a Seq is a frozen value, so a row seen
    before gives the Seq built from it then; any other row is read afresh."""
    queue_of: dict[str, Status] = {}  # made on the first filled status or num_blocks: the queue a sequence is in
    scheduled = dict(pending or ())

    def seq(seq_id: str) -> Seq:
        q = snap["seqs"][seq_id]
        kept = made.get(seq_id) if made is not None else None
        if kept is not None and kept[0] is q:
            return kept[1]
        prompt_len, max_tokens = requests[seq_id]
        status, blocks = q["status"], q["num_blocks"]
        filled = status is None or blocks is None
        if filled:
            if not queue_of:
                for name, queue in (("RUNNING", snap["running"]), ("WAITING", snap["waiting"])):
                    queue_of.update(dict.fromkeys(queue, Status[name]))  # in both: waiting, as I6 sees it first
            where = queue_of.get(seq_id, Status.FINISHED)
            status = where.name if status is None else status
            if blocks is None:
                tokens = q["num_computed"] + scheduled.get(seq_id, 0)
                blocks = -(-tokens // config.block_size) if where is Status.RUNNING else 0
        built = Seq(seq_id, prompt_len, max_tokens, tuple(q["output"]), q["num_computed"], blocks, Status[status])
        if made is not None and not filled:
            made[seq_id] = (q, built)  # the row is held: it stays the object it is (a filled Seq reads the queues)
        return built
    finished = snap["finished"]
    if finished is None:
        given = set(snap["waiting"]) | set(snap["running"])
        finished = [i for i in requests if i in snap["seqs"] and i not in given]
    queues = {name: tuple(seq(i) for i in ids) for name, ids in
              (("waiting", snap["waiting"]), ("running", snap["running"]), ("finished", finished))}
    used = snap["blocks_used"]
    used = sum(q.num_blocks for q in queues["running"]) if used is None else used
    preemptions = snap["num_preemptions"]
    batch = tuple((s, n) for s, n in pending) if pending is not None else None
    return State(config, queues["waiting"], queues["running"], queues["finished"], used,
                 0 if preemptions is None else preemptions, batch)


def field_mismatch(got: Mapping[str, Any], want: Mapping[str, Any]) -> tuple[str, str, Any, Any] | None:
    """The first observable field where a snapshot differs from the spec's: (rule, name, spec, submission). A
    field the submission does not give (null) is not compared."""
    for name in ("blocks_used", "num_preemptions", "running", "waiting", "finished"):
        if got[name] is not None and got[name] != want[name]:
            return FIELD_RULES[name], name, want[name], got[name]
    for seq_id in sorted(want["seqs"]):
        mine, spec = got["seqs"].get(seq_id), want["seqs"][seq_id]
        if mine is None:
            return "I6", f"{seq_id}", "present", None
        for name in ("status", "num_computed", "num_tokens", "num_blocks", "output"):
            if mine[name] is not None and mine[name] != spec[name]:
                lost = name == "output" and mine[name] != spec[name][:len(mine[name])]
                rule = ("I4" if lost else "U.sample") if name == "output" else FIELD_RULES[name]
                return rule, f"{seq_id}.{name}", spec[name], mine[name]
    return None


def _spec_finding(k: int, call: str, got: Mapping[str, Any], want: Mapping[str, Any]) -> Finding | None:
    diff = field_mismatch(got, want)
    if diff is None:
        return None
    rule, name, spec, mine = diff
    return Finding("invariants", rule, k, call, f"after step {k} {call}(): {name} is {mine}, the spec's is {spec} "
                   "after the same batches", spec, mine)


def invariants(workload: Workload, observed: dict[str, Any]) -> list[Finding]:
    """Judge the submission's own state after every call; the first violation or difference from the spec.

    A black-box run shows no state, only the batches: then what they show of I2 and I6; so do the calls of a
    white-box run whose state could not be read (an attribute a sequence gets on first use), while every other
    snapshot is judged. A container the state could not be read from (conformance/sandbox/readers.py) is named
    as an I6 finding: it does not show each sequence in exactly one queue."""
    if not observed.get("white_box"):
        return batch_invariants(workload, observed)
    bad = observed.get("white_box_error")  # a queue or an output that cannot be read; another type is only a note
    if bad is not None:
        return [Finding("invariants", "I6", bad["step"], bad["call"], f"after step {bad['step']} {bad['call']}(): "
                        f"{bad['message']}")]
    try:
        found, skipped = _judge(workload, observed)
    except (KeyError, TypeError, ValueError) as e:
        return [Finding("invariants", "I6", 0, "snapshot", f"the white-box state is inconsistent: {e!r}")]
    if not found and skipped:
        return batch_invariants(workload, observed)  # the calls whose state could not be read: what the batches show
    return found


def batch_invariants(workload: Workload, observed: dict[str, Any]) -> list[Finding]:
    """I2 and I6 as any caller sees them: a batch's tokens within the budget, at most max_num_seqs sequences in it
    (every scheduled sequence is running)."""
    config = workload.config
    for got in observed["steps"]:
        batch, k = got.get("schedule") or [], got["step"]
        tokens = sum(n for _, n in batch)
        if tokens > config.max_num_batched_tokens:
            return [Finding("invariants", "I2", k, "schedule", f"step {k}: schedule() returned {tokens} tokens, more "
                            f"than max_num_batched_tokens {config.max_num_batched_tokens} (I2)",
                            config.max_num_batched_tokens, tokens)]
        if len(batch) > config.max_num_seqs:
            return [Finding("invariants", "I6", k, "schedule", f"step {k}: schedule() returned {len(batch)} sequences, "
                            f"more than max_num_seqs {config.max_num_seqs} can be running (I6)",
                            config.max_num_seqs, len(batch))]
    return []


def _judge(workload: Workload, observed: dict[str, Any]) -> tuple[list[Finding], bool]:
    """Walk the calls; while the submission's snapshots are the spec's, its verdicts are the spec's own (cached).
    The first finding, and whether a snapshot was skipped (unreadable) on the way."""
    requests = {r.seq_id: (r.prompt_len, r.max_tokens) for r in workload.requests}
    config = workload.config
    spec_steps, on_spec = expected_trace(workload).steps, _spec_calls(workload)
    before: State | None = None  # None: every snapshot so far is the spec's; `last` is the latest (None: none yet)
    last: tuple[dict[str, Any], list[list[Any]] | None] | None = None
    blind = skipped = False  # blind: the last snapshot could not be read, and the next is judged as a state alone
    same_so_far = True
    made: dict[str, tuple[Any, Seq]] = {}  # to_state's Seqs, by the rows they were built from
    for got in observed["steps"]:
        k = got["step"]
        if got.get("schedule") is None:
            return [], skipped
        batch = tuple((s, n) for s, n in got["schedule"])
        spec = spec_steps[k - 1] if k <= len(spec_steps) else None
        same_so_far = same_so_far and spec is not None and list(spec.batch) == list(batch)
        arrivals = tuple(Seq(i, *requests[i]) for i in got["added"])
        for call, key in (("schedule", "after_schedule"), ("update", "after_update")):
            if key not in got:  # the run stopped at this call
                return [], skipped
            snap = got[key]
            if snap is None:  # unreadable (an attribute it gets later): skipped, the rest are judged
                blind, skipped, before, last = True, True, None, None
                continue
            if blind:  # no state before it to judge the call by: the state alone, then on from there
                found, before = _call(k, call, config, requests, None, batch, snap, got["schedule"],
                                      spec if same_so_far else None, made=made)
                blind = False
                if found is not None:
                    return [found], skipped
                continue
            known = on_spec[k - 1] if before is None and same_so_far and k <= len(on_spec) else None
            at = 1 if call == "schedule" else 3
            if known is not None and known[0] == list(got["added"]) and (
                    snap == known[at] or known[at + 1] is None and _agrees(snap, known[at])):
                found = known[at + 1]  # the same inputs as the spec's own call: its verdict
            else:
                if before is None:  # leaving the spec's path: rebuild the state the last snapshot showed
                    before = State(config) if last is None else to_state(config, requests, *last, made)
                if call == "schedule":
                    before = State(config, before.waiting + arrivals, before.running, before.finished,
                                   before.blocks_used, before.num_preemptions)
                found, before = _call(k, call, config, requests, before, batch, snap, got["schedule"],
                                      spec if same_so_far else None, made=made)
                last = None
            if found is not None:
                return [found], skipped
            if before is None or known is not None:
                before, last = None, (snap, got["schedule"] if call == "schedule" else None)
    return [], skipped


def _call(k: int, call: str, config: Config, requests: dict[str, tuple[int, int]], before: State | None,
          batch: tuple[tuple[str, int], ...], snap: Mapping[str, Any], pending: list[list[Any]],
          spec: Any, spec_json: Mapping[str, Any] | None = None,
          made: dict[str, tuple[Any, Seq]] | None = None) -> tuple[Finding | None, State]:
    """Judge the state after one call: the invariants, then num_tokens, then every field against the spec's
    (`spec_json`: the spec's state after the call as snapshot_to_json gives it, when already made; `made`:
    to_state's). No state `before` (the last snapshot could not be read): the state invariants alone."""
    after = to_state(config, requests, snap, pending if call == "schedule" else None, made)
    changed = check_step(before, batch, after) if before is not None else check_state(after)
    violations = given(changed + (check_all_finished(after) if call == "update" else []), snap)
    if violations:
        v = most_specific(violations)
        return Finding("invariants", v.invariant, k, call, f"after step {k} {call}(): {v.message}",
                       _plain(v.expected), _plain(v.actual)), after
    for q in after.seqs():
        if snap["seqs"][q.seq_id]["num_tokens"] not in (q.num_tokens, None):
            return Finding("invariants", "I3", k, call, f"after step {k} {call}(): {q.seq_id}."
                           f"num_tokens is not prompt_len + len(output) = {q.num_tokens}"), after
    if spec is not None:
        want = spec_json if spec_json is not None else \
            snapshot_to_json(spec.after_schedule if call == "schedule" else spec.after_update)
        return _spec_finding(k, call, snap, want), after
    return None, after


def _agrees(got: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    """Whether a snapshot that leaves some values null equals the spec's in every value it gives: then judging it
    (to_state fills the rest in from the rules) gives the spec's own verdict, where that is None."""
    if not all(got[k] is None or got[k] == want[k] for k in ("blocks_used", "num_preemptions", "finished")) or \
            got["waiting"] != want["waiting"] or got["running"] != want["running"]:
        return False
    mine, spec = got["seqs"], want["seqs"]
    if list(mine) != list(spec):
        return False
    for name in ("num_computed", "num_tokens", "num_blocks", "status", "output"):  # compared a column at a time
        column = list(map(itemgetter(name), mine.values()))
        if column != list(map(itemgetter(name), spec.values())) and \
                (name not in OPTIONAL_FIELDS or any(x is not None for x in column)):
            return False
    return True


def state_violations(config: Config, requests: dict[str, tuple[int, int]], snap: Mapping[str, Any]
                     ) -> list[Violation]:
    """The state invariants' violations of a snapshot taken after update(), about the values it gives."""
    return given(check_state(to_state(config, requests, snap)), snap)


def given(violations: list[Violation], snap: Mapping[str, Any]) -> list[Violation]:
    """`violations` of the state to_state made of `snap`, as the submission's own values show them."""
    if violations and (snap["finished"] is None or snap["blocks_used"] is None or
                       any(None in (r["status"], r["num_blocks"]) for r in snap["seqs"].values())):
        return [w for v in violations if (w := _given(v, snap)) is not None]
    return violations


def _given(v: Violation, snap: Mapping[str, Any]) -> Violation | None:
    """`v` as the submission's own values show it: None where it is about a value to_state filled in (the
    submission does not give it), reworded where it names one."""
    row = snap["seqs"].get(v.seq_id) if v.seq_id is not None else None
    if row is not None and (kind(v) == "status" and row["status"] is None or
                            v.invariant == "I1" and row["num_blocks"] is None):
        return None
    if kind(v) == "status" and snap["finished"] is None and v.expected == Status.FINISHED.name:
        return replace(v, message=f"{v.seq_id} is in neither waiting nor running, yet its status is {v.actual} "
                                  "(the Scheduler gives no finished queue: a sequence in neither is finished)")
    if v.invariant == "I1" and v.seq_id is None and snap["blocks_used"] is None:
        return replace(v, message=f"running sequences hold {v.actual} blocks, expected {v.expected} (the Scheduler "
                                  "gives no blocks_used)")
    return v


@functools.lru_cache(maxsize=4096)
def _spec_calls(workload: Workload) -> tuple[tuple[Any, ...], ...]:
    """Per step of the spec's own run: (added, snapshot after schedule, its verdict, after update, its verdict).

    Each verdict is _call's on the spec's snapshots, so a submission whose snapshots and batches equal
    the spec's up to a call gets exactly the verdict judging its own would give, without judging it.
    """
    requests = {r.seq_id: (r.prompt_len, r.max_tokens) for r in workload.requests}
    config, before = workload.config, State(workload.config)
    out: list[tuple[Any, ...]] = []
    for spec in expected_trace(workload).steps:
        arrivals = tuple(Seq(i, *requests[i]) for i in spec.added)
        before = State(config, before.waiting + arrivals, before.running, before.finished, before.blocks_used,
                       before.num_preemptions)
        pending = [[i, n] for i, n in spec.batch]
        row: list[Any] = [list(spec.added)]
        for call, state in (("schedule", spec.after_schedule), ("update", spec.after_update)):
            snap = snapshot_to_json(state)  # the spec's own snapshot: the spec's state to compare it with, too
            found, before = _call(spec.step, call, config, requests, before, tuple(spec.batch), snap, pending, spec,
                                  snap)
            row += [snap, found]
            if found is not None:  # the spec breaks its own invariant here: nothing after it is on the spec's path
                return (*out, tuple(row))
        out.append(tuple(row))
    return tuple(out)


def _plain(x: object) -> Any:
    return x if isinstance(x, (int, str, list, type(None))) else str(x)

