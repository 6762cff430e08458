"""Drivers: run a workload on a scheduler under test and record what it did, as plain JSON.

The driver owns the call protocol of docs/api.md: arrivals are added before the
``schedule()`` of their step, then ``schedule()`` and ``update()`` alternate until
every request has finished or the run passes the workload's liveness bound. It
records, never judges: the observed trace is plain data (so a child process can
produce it and a parent can judge it), and an exception from the submission ends
the run with an ``error`` record instead of escaping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from conformance.adapters import Factory, SchedulerUnderTest, SnapshotError
from conformance.capabilities import capabilities_of
from conformance.checks.checkers import expected_trace
from conformance.limits import RAISED, RUN_SECONDS, STOPPED, CallTimeout, note_hung, time_limit
from conformance.observed import PARTLY, begun, white_box_note
from conformance.sandbox.readers import broke, describe
from spec.feasible import liveness_bound
from spec.loop import Steps, changed_by_caller
from spec.trace import Request, Workload, workload_to_json

STEP_CAP = 2_000  # a run whose liveness bound is larger stops this far past the spec's own length (a hang)
STEP_CAPPED = "still unfinished after"  # how the message of a run stopped at its step cap begins


def batch_problem(result: object) -> str | None:
    """Why a schedule() result is not a dict[str, int], or None. Read by its real items, as the grader reads it."""
    if not issubclass(type(result), dict):  # the real type: __class__ may lie
        return f"schedule() returned a {type(result).__name__}, expected a dict[str, int]"
    for k, v in dict.items(cast("dict[object, object]", result)):  # an overridden items() is never called
        if type(k) is not str:
            return f"schedule() returned key {_show(k)} ({type(k).__name__}); keys are seq_id strings"
        if type(v) is not int and (type(v) is bool or not issubclass(type(v), int)):  # a subclass: read by value
            return f"schedule() returned {k}: {_show(v)} ({type(v).__name__}); token counts are ints"
    return None


def _show(value: object) -> str:
    """A value in a message, without calling a submission's own __repr__ (it may raise or lie)."""
    if type(value) in (int, str, float, bool, type(None)):
        return repr(value)[:80]
    if type(value) in (list, tuple):
        held = list(cast("list[object] | tuple[object, ...]", value))
        items = [_show(x) for x in held[:5]] + (["..."] if len(held) > 5 else [])
        return "[" + ", ".join(items) + "]" if type(value) is list else "(" + ", ".join(items) + ")"
    return f"<{type(value).__name__} object>"


def batch_pairs(result: dict[str, int]) -> list[list[Any]]:
    """The [seq_id, n] pairs of a batch that batch_problem accepted, by its real items; an int subclass's count by
    its int value (int.__index__: none of its methods is called), as the sandbox child reads it."""
    return [[k, v if type(v) is int else int.__index__(v)] for k, v in dict.items(result)]


def finished_ids(finished: object) -> list[str] | None:
    """update()'s list of finished seq_ids by its real items, or None when it is not a list of str."""
    if not issubclass(type(finished), list):
        return None
    ids: list[object] = list(list.__iter__(cast("list[object]", finished)))
    return cast("list[str]", ids) if all(type(x) is str for x in ids) else None


class Recorder:
    """The driver's sample function: the workload's rule, with every call recorded."""

    def __init__(self, workload: Workload) -> None:
        self.rule = workload.sample
        self.calls: list[list[Any]] = []

    def __call__(self, seq_id: str, output: tuple[int, ...]) -> int:
        token = fresh_int(self.rule(seq_id, tuple(output)))
        self.calls.append([seq_id, len(output), token])
        return token


def fresh_int(value: int) -> int:
    """An equal int that is a new object (outside CPython's small-int cache, -5..256).

    A real model hands back tokens it has just computed, never the eos object the
    scheduler was configured with; so must the driver, or `token is eos` would pass.
    """
    return int(str(value))


def run_workload(workload: Workload, factory: Factory, white_box: bool = True,
                 mutate_results: bool = False, until: int | None = None) -> dict[str, Any]:
    """Run `workload` on a fresh instance from `factory`; return the observed trace (plain JSON).

    mutate_results changes each dict that schedule() returned before calling update() (spec.loop
    changed_by_caller), as the caller may; a conforming submission must not notice. With `until`,
    the run stops after that step (stop "until": only the steps so far can be judged). The
    whole run is limited to RUN_SECONDS; a hang is recorded like an exception, and remembered by the
    hang ledger in force (a later phase leaves the workload out).
    """
    state: dict[str, Any] = {}
    try:
        with time_limit(RUN_SECONDS):
            return _run(workload, factory, white_box, mutate_results, state, until)
    except CallTimeout as e:  # a run past its limit is a time-out, however it ended (limits.TimeLimit)
        note_hung(workload)
        observed: dict[str, Any] = state["observed"]
        if not out_of_time(observed):  # not caught at the call it stopped (drivers._run catches it there)
            observed["stop"] = "error"
            observed["error"] = {"step": len(observed["steps"]), "call": "?", "kind": "CallTimeout",
                                 "message": str(e)}
        return observed



def _run(workload: Workload, factory: Factory, white_box: bool, mutate_results: bool,
         where: dict[str, Any], until: int | None = None) -> dict[str, Any]:
    """The body of run_workload; `where` hands the observed trace to the timeout handler.

    One function, in the order of the protocol (spec/loop.py gives the steps): each call's result goes
    into the step record the moment it returns, so a failing call leaves the record as far as it got."""
    steps: list[dict[str, Any]] = []
    observed = begun(workload_to_json(workload), white_box, steps)
    where["observed"] = observed
    sample = Recorder(workload)
    ids = {r.seq_id for r in workload.requests}  # what a caller changing a returned dict never writes
    call = "create"
    step = 0

    def fail(kind: str, message: str) -> dict[str, Any]:
        observed["stop"] = "error"
        observed["error"] = {"step": step, "call": call, "kind": kind, "message": message}
        return observed

    try:
        sut: SchedulerUnderTest = factory(workload.config, sample)
    except STOPPED as e:  # the submission's constructor raised
        return fail(raised(e)[0], str(e))
    idle_calls = capabilities_of(sut).idle_schedule  # a malformed declaration stops the run (CapabilityError)
    run: Steps[Request] = Steps(workload.requests, lambda r: r.arrival, lambda r: r.seq_id, run_cap(workload))
    live: set[str] = set()  # added and not yet reported finished
    read = False  # some white-box snapshot of this run was read
    for step, arrivals in run:
        if until is not None and step > until:
            observed["stop"] = "until"
            return observed
        record: dict[str, Any] = {"step": step, "added": []}
        steps.append(record)
        try:
            for r in arrivals:
                call = f"add({r.seq_id!r})"
                sut.add(r.seq_id, r.prompt_len, r.max_tokens)
                record["added"].append(r.seq_id)
                live.add(r.seq_id)
            if not live and not idle_calls:  # the engine's contract: no schedule() with nothing to do
                record.update(schedule=[], sampled=[], finished=[], idle=True)
                if white_box and observed["white_box_error"] is None:
                    record["after_schedule"] = record["after_update"] = _snapshot(sut, observed, step, call, read)
                    read = read or record["after_update"] is not None
                continue
            call = "schedule"
            result = sut.schedule()
            why = batch_problem(result)
            if why is not None:
                record["schedule"] = None
                return fail("bad_result", why)
            assert isinstance(result, dict)
            record["schedule"] = batch_pairs(result)
            if white_box and observed["white_box_error"] is None:
                record["after_schedule"] = _snapshot(sut, observed, step, call, read)
                read = read or record["after_schedule"] is not None
            if mutate_results:
                changed_by_caller(result, ids, step)
            call = "update"
            first = len(sample.calls)
            finished = sut.update()
            record["sampled"] = sample.calls[first:]
            finished_now = finished_ids(finished)
            if finished_now is None:
                return fail("bad_result", f"update() returned {_show(finished)}; expected a list of finished seq_ids")
            record["finished"] = finished_now
            run.finished(finished_now, bool(record["schedule"]))
            live.difference_update(finished_now)
            if white_box and observed["white_box_error"] is None:
                record["after_update"] = _snapshot(sut, observed, step, call, read)
                read = read or record["after_update"] is not None
        except STOPPED as e:  # the submission raised or hung: a finding, never a suite crash
            return fail(*raised(e))
    if not run.done:
        capped = step_capped(workload, step)
        if capped is not None:
            observed["stop"], observed["error"] = "error", capped
            return observed
        observed["stop"] = "bound"
    try:
        outputs = sut.outputs()
    except RAISED:
        outputs = None
    observed["outputs"] = None if outputs is None else {k: list(v) for k, v in sorted(outputs.items())}
    return observed


RESERVED_KINDS = ("bad_result", "CallTimeout")  # error kinds the drivers give; an exception never takes one


def raised(e: BaseException) -> tuple[str, str]:
    """The error record's kind and message for an exception from the submission (or a timeout), read as the sandbox's
    child reads it (readers.describe): the submission's __str__, __len__ or __bool__ on its message are never
    trusted further than that."""
    if isinstance(e, CallTimeout):
        return "CallTimeout", str(e) or repr(e)
    name, message = describe(e)
    return (f"{name} (raised)" if name in RESERVED_KINDS else name), message or f"{name}()"


def out_of_time(observed: dict[str, Any]) -> bool:
    """Whether the run was stopped by its time limit, which falls wherever the machine's speed puts it; the step
    cap, also a CallTimeout, falls at the same step every time."""
    err = observed["error"]
    return err is not None and err["kind"] == "CallTimeout" and not err["message"].startswith(STEP_CAPPED)


def min_steps(workload: Workload) -> int:
    """A lower bound on the spec's steps: every token is computed once, at most a budget per step."""
    tokens = sum(r.prompt_len + r.max_tokens - 1 for r in workload.requests)
    return -(-tokens // workload.config.max_num_batched_tokens)


def fewest_steps(workload: Workload) -> int:
    """A lower bound on the steps of any run of `workload`, whatever the budgets: a sequence samples one token
    per step, from the step it arrives in, until its max_tokens or its first eos."""
    eos_at = dict(workload.sample.eos_at)
    return max((r.arrival - 1 + min([r.max_tokens, *(k + 1 for k in eos_at.get(r.seq_id, ()))])
                for r in workload.requests), default=0)


LONGEST_RUN = 2**16  # steps of the longest spec run a command reads from a user's file (a 200-byte file can ask
# for 10**9); the suite's own longest is thorough's run of 10**4 steps (conformance/workloads/reach.py)


def too_long(workload: Workload, source: str) -> str | None:
    """Why the spec will not be run on `workload` from `source` (None: it will): a run that takes more than
    LONGEST_RUN steps, whatever its budgets, holds every step's state."""
    fewest = fewest_steps(workload)
    if fewest <= LONGEST_RUN:
        return None
    return (f"{source}: its run takes at least {fewest:,} steps (a request's arrival plus its max_tokens), more than "
            f"the {LONGEST_RUN:,} this command runs the spec for; shorten it")


def runnable(workload: Workload) -> bool:
    """Whether the spec itself can run `workload` in reasonable time (a shrinker's candidate may not be).

    Halving the budget of a workload whose prompts are near 2**53 gives one that needs
    2**53 / budget steps; such a candidate is not a counterexample anyone can read.
    """
    return min_steps(workload) <= STEP_CAP


def step_cap(workload: Workload, bound: int) -> int:
    """The most steps a run may take before it counts as a hang.

    The liveness bound is the sum of all tokens, so a workload with prompts near 2**53
    has a bound no run can reach; past STEP_CAP such a run stops at twice the spec's
    length plus STEP_CAP (a hang, as RUN_SECONDS would say, without waiting for it).
    """
    if bound <= STEP_CAP:
        return bound
    if not runnable(workload):
        return STEP_CAP
    return STEP_CAP + 2 * len(expected_trace(workload).steps)


def run_cap(workload: Workload) -> int:
    """The steps a run of `workload` may take: its liveness bound, or step_cap's cap if that is lower."""
    bound = liveness_bound(workload.requests)
    return min(bound, step_cap(workload, bound))


def step_capped(workload: Workload, steps: int) -> dict[str, Any] | None:
    """The error that ends a run stopped unfinished after `steps` steps, at a step cap short of its liveness bound
    (a hang, as RUN_SECONDS would say, without waiting for it); None if the run stopped otherwise (at its bound,
    stalled: stop "bound"). The sandbox's runs end the same way (conformance/grading/observe.py)."""
    cap = run_cap(workload)
    if steps < cap or cap == liveness_bound(workload.requests):
        return None
    return {"step": cap + 1, "call": "schedule", "kind": "CallTimeout",
            "message": f"{STEP_CAPPED} {cap} steps, far past the spec's last step (an endless loop?); the liveness "
                       "bound of this workload is too large to run to"}


def _snapshot(sut: SchedulerUnderTest, observed: dict[str, Any], step: int, call: str,
              read_before: bool) -> Mapping[str, Any] | None:
    """The white-box snapshot, or None with a note saying which attribute is missing (a snapshot that lacks only
    values the judge can do without, conformance.observed.OPTIONAL_NAMES and OPTIONAL_FIELDS, is judged on the rest,
    with a note too).

    Attributes that exist but cannot be read (a None in a queue) are recorded as a
    white-box error, which the invariants check reports; a missing attribute is a note.
    So is state whose reading raises, unless earlier snapshots of the run read it
    (`read_before`): then it is there and broke, and the error is a finding too.
    """
    try:
        snap = sut.snapshot()
    except SnapshotError as e:
        observed["white_box_error"] = {"step": step, "call": call, "message": str(e)}
        return None
    except Exception as e:
        if read_before:
            observed["white_box_error"] = {"step": step, "call": call, "message": broke(f"{type(e).__name__}: {e}")}
            return None
        snap = None
        observed["note"] = observed["note"] or white_box_note(f"reading the state raised {e!r}", False)
    said = getattr(sut, "white_box_note", None)  # the canonical adapter's, worded as the sandbox's parent words it
    if said is not None:
        observed["note"] = said
        return snap
    missing = getattr(sut, "missing", None)
    if snap is None and (observed["note"] is None or observed["note"].startswith(PARTLY)):
        observed["note"] = white_box_note(missing or "the adapter gives no white-box access", False)
    elif missing and observed["note"] is None:  # judged without the values it lacks (observed.OPTIONAL_NAMES)
        observed["note"] = white_box_note(missing, True)
    return snap
