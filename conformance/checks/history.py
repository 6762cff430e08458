"""Probes of what outlives a call: retained return values, two instances with different configs, process history.

- ``judge_retained``: every dict schedule() returned, every list update() returned and
  every Sequence object is kept until the end of the run and re-checked: a value that
  changed after it was returned (H.retained), one object returned by two calls, or a
  Sequence object replaced by another (H.aliased). The run's keeper (conformance/sandbox/keep.py)
  reports what it saw; ``judge_kept`` judges that report, for `check` and for `grade` alike.
- ``instances``: a second instance whose config differs in every field runs beside the
  first, interleaved call by call (same request ids); each must do what it does on a
  single instance (H.instances), judged by ``judge_instances``, which `grade` uses on the
  sandbox's runs too. The second workload is the counterexample's "prelude". The instances run on a second
  copy of the submission's module (``apart``), shared by every such probe and the state machine: what they leave
  behind reaches no run judged alone.
- ``after_history``: a check's failure that a freshly loaded copy does not reproduce is
  hygiene's [H.history], in `check` and `grade` alike.
- ``prelude_json`` / ``run_prelude``: a finding that needs earlier instances in the
  process carries them in its trace, and replay runs them first in a fresh process; one that no fixed
  history rebuilds (state keyed by id()) carries ``repeat_json``, and replay runs it until it fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from conformance.adapters import CanonicalAdapter, CanonicalFactory, Factory, SchedulerUnderTest
from conformance.beside import beside_workload, created_at
from conformance.capabilities import capabilities_of
from conformance.checks import checkers
from conformance.checks.checkers import Finding
from conformance.checks.probes import changed, first_difference
from conformance.drivers import Recorder, batch_pairs, batch_problem, raised, run_workload
from conformance.limits import RAISED, CallTimeout, time_limit
from conformance.limits import RUN_SECONDS as DRIVER_SECONDS
from conformance.observed import begun
from conformance.retention import Kept
from spec.feasible import liveness_bound
from spec.loop import Steps
from spec.trace import Request, Workload, workload_from_json, workload_to_json

RUN_SECONDS = 2 * DRIVER_SECONDS  # two instances share one limit


def judge_retained(sut: object) -> Finding | None:
    """Re-check every value the submission returned, at the end of the run (H.retained, H.aliased)."""
    if not isinstance(sut, CanonicalAdapter):
        return None  # an adapter that keeps no returned values (custom or wire): nothing to re-check
    return judge_kept(sut.retention())


def judge_kept(kept: Sequence[Kept]) -> Finding | None:
    """The finding of what the end of a run showed about the returned values (conformance/retention.py): the first
    thing, in the order of the calls. `check` and `grade` both judge their runs with this."""
    if not kept:
        return None
    k = kept[0]
    where = f"step {k.step}: the {'dict' if k.call == 'schedule' else 'list'} {k.call}() returned"
    if k.kind == "aliased":
        assert k.earlier is not None
        return _finding("H.aliased", k.step, k.call, f"{where} is the same object as step {k.earlier[0]}'s "
                        f"{k.earlier[1]}() result; return a new one each call (the caller may keep the old one)")
    if k.kind == "changed":
        return _finding("H.retained", k.step, k.call, f"{where} was {k.then} then, but {k.now} at the end of the "
                        "run; never change a value after returning it", k.then, k.now)
    if k.kind == "replaced":
        return _finding("H.aliased", k.step, k.call, f"step {k.step}: update() returned a Sequence {k.seq!r} that is "
                        "not the object passed to add(); keep and return the caller's objects")
    return _finding("H.retained", k.step, k.call, f"step {k.step}: update() returned {k.seq} finished with "
                    f"{k.field}={k.then}, but at the end of the run it is {k.now}; a finished sequence keeps its "
                    "fields", k.then, k.now)


def _finding(rule: str, step: int, call: str, message: str, expected: Any = None, actual: Any = None) -> Finding:
    return Finding("hygiene", rule, step, call, message, expected, actual)


# --- two instances, different configs --------------------------------------------------


def other_workload(w: Workload) -> Workload:
    """The second instance's workload: the same requests and ids under a config that differs in every field
    (conformance/beside.py, which the sandbox child derives it with too)."""
    return workload_from_json(beside_workload(workload_to_json(w)))


class _Lane:
    """One instance of an interleaved run, recording an observed trace in the driver's format."""

    def __init__(self, w: Workload, factory: Factory, cap: int, start: int = 1) -> None:
        self.w = w
        self.run: Steps[Request] = Steps(w.requests, lambda r: r.arrival, lambda r: r.seq_id,
                                         min(liveness_bound(w.requests), cap))
        self.run.step = start - 1  # created before step `start`: no call in the steps before
        self.sample = Recorder(w)
        self.steps: list[dict[str, Any]] = [{"step": k, "added": [], "schedule": [], "sampled": [], "finished": [],
                                             "idle": True} for k in range(1, start)]
        self.obs: dict[str, Any] = begun(workload_to_json(w), False, self.steps)
        self.call = "create"
        self.start, self.factory = start, factory
        self.sut: SchedulerUnderTest | None = None
        self.idle_calls = False
        self.open: set[str] = set()  # added and not yet reported finished

    def create(self) -> None:
        """Make the scheduler (interleave calls this just before step `start`)."""
        self.sut = self.guard(lambda: self.factory(self.w.config, self.sample), 0 if self.start == 1 else self.start)
        if self.sut is not None:
            self.idle_calls = capabilities_of(self.sut).idle_schedule

    def live(self) -> bool:
        """Whether this lane takes the next step: created, no error, not done, not at its limit, not stalled."""
        return (self.sut is not None and self.obs["error"] is None and not self.run.done
                and self.run.step < self.run.limit and not self.run.stalled)

    def guard(self, fn: Callable[[], Any], step: int) -> Any:
        try:
            return fn()
        except RAISED as e:  # the submission raised: recorded, as the driver does
            self.obs["stop"] = "error"
            self.obs["error"] = {"step": step, "call": self.call, "kind": raised(e)[0], "message": raised(e)[1]}
            return None

    def schedule(self) -> None:
        arrivals = self.run.next()
        assert arrivals is not None and self.sut is not None, "schedule() of a lane that is not live"
        step = self.run.step
        record: dict[str, Any] = {"step": step, "added": []}
        self.steps.append(record)
        for r in arrivals:
            self.call = f"add({r.seq_id!r})"
            self.guard(partial(self.sut.add, r.seq_id, r.prompt_len, r.max_tokens), step)
            record["added"].append(r.seq_id)
            self.open.add(r.seq_id)
        if not self.open and not self.idle_calls:  # the engine's contract: no schedule() with nothing to do
            record.update(schedule=[], idle=True)
            return
        self.call = "schedule"
        got = self.guard(self.sut.schedule, step)
        record["schedule"] = batch_pairs(got) if batch_problem(got) is None else None

    def update(self, step: int) -> None:
        if self.steps[-1].get("idle"):
            self.steps[-1].update(sampled=[], finished=[])
            return
        self.call = "update"
        first = len(self.sample.calls)
        assert self.sut is not None, "update() of a lane never created"
        got = self.guard(self.sut.update, step)
        self.steps[-1]["sampled"] = self.sample.calls[first:]
        if isinstance(got, list):
            self.steps[-1]["finished"] = list(got)
            self.run.finished(got, bool(self.steps[-1].get("schedule")))
            self.open.difference_update(x for x in got if isinstance(x, str))

    def finish(self) -> dict[str, Any]:
        if self.obs["error"] is None and not self.run.done:
            self.obs["stop"] = "bound"
        if self.obs["error"] is None and self.sut is not None:  # never created: the run stopped before its step
            self.obs["outputs"] = self.guard(self.sut.outputs, len(self.steps))
        return self.obs


def interleave(workloads: list[Workload], factory: Factory, cap: int) -> list[dict[str, Any]]:
    """Run instances call by call, at most `cap` steps each; their observed traces, in the order of `workloads`.
    The first is created before step 1, every other one just before the step of its first request (created_at),
    those of one step last to first; the first's calls come first each step. The sandbox child runs groups and
    two-instance probes in this order too (conformance/sandbox/child.py ``together``)."""
    lanes = [_Lane(w, factory, cap, 1 if i == 0 else created_at(workload_to_json(w)))
             for i, w in enumerate(workloads)]
    made = [False] * len(lanes)
    step = 0
    try:
        with time_limit(RUN_SECONDS):
            while not all(made) or any(lane.live() for lane in lanes):
                step += 1
                for i in reversed(range(len(lanes))):
                    if not made[i] and lanes[i].start <= step:
                        made[i] = True
                        lanes[i].create()
                for lane in lanes:
                    if lane.live():
                        lane.schedule()
                for lane in lanes:
                    if lane.obs["error"] is None and lane.steps and lane.steps[-1]["step"] == step:
                        lane.update(step)
    except CallTimeout as e:
        lanes[0].obs["stop"] = "error"
        lanes[0].obs["error"] = {"step": step, "call": lanes[0].call, "kind": "CallTimeout", "message": str(e)}
    return [lane.finish() for lane in lanes]


def apart(factory: Factory) -> Factory:
    """The factory for instances run side by side: over a second copy of a submission's module, where there is one
    (CanonicalFactory.apart), so what they leave in its globals reaches no later run."""
    return factory.apart() if isinstance(factory, CanonicalFactory) else factory


def _after(factory: Factory, runs: Sequence[dict[str, Any]]) -> None:
    """After instances apart ran, a copy one of them hung in is dropped (CanonicalFactory.hung_apart)."""
    if isinstance(factory, CanonicalFactory) and any(_timed_out(o) for o in runs):
        factory.hung_apart()


def instances(workload: Workload, factory: Factory, other: Workload | None = None,
              plain: dict[str, Any] | None = None) -> list[Finding]:
    """Two instances with different configs, interleaved; each must do what it does alone (H.instances).

    Each lane is compared with a run of its workload on a single instance, so the
    submission's own bugs stay the other checks' findings; with `plain`, this
    workload's single-instance run is reused. A workload this submission does not
    finish alone is skipped, and both lanes stop after a few times its steps. The second runs alone before the two
    meet, so what they leave behind reaches no run alone; if the two together run out of time where both alone were
    quick, the first is timed alone again (the sandbox times every run) and the hang is H.timeout (hung_together).
    """
    other = other if other is not None else other_workload(workload)
    alone_a = plain if plain is not None else run_workload(workload, factory, white_box=False)
    if alone_a["stop"] != "done":
        return []  # already a liveness or hygiene finding; two instances would only run longer
    cap = 4 * len(alone_a["steps"]) + 16
    side = apart(factory)
    began = time.process_time()
    [alone_b] = interleave([other], side, cap)
    alone_seconds = time.process_time() - began
    obs_a, obs_b = interleave([workload, other], side, cap)
    _after(factory, [alone_b, obs_a])
    found = judge_instances(other, alone_a, obs_a, obs_b, alone_b)
    if found or not _timed_out(obs_a) or alone_b["stop"] != "done":
        return found
    began = time.process_time()
    again = run_workload(workload, factory, white_box=False)
    alone_seconds += time.process_time() - began
    hung = hung_together(obs_a, alone_seconds, RUN_SECONDS, "with a second instance interleaved call by call")
    return [hung] if hung is not None and again["stop"] == "done" else []


def judge_instances(other: Workload, alone_a: dict[str, Any], obs_a: dict[str, Any], obs_b: dict[str, Any] | None,
                    alone_b: dict[str, Any]) -> list[Finding]:
    """Judge two instances run call by call against each one's run alone (H.instances): the first lane whose calls
    differ. `check` and `grade` both judge with this; `obs_b` None: the second instance never ran.

    A first workload not finished alone is skipped (already another check's finding); the second's run alone, made
    only to compare with, that fails is a finding of its own (failed_alone); a run out of time is inconclusive (a
    hang alone is H.timeout's finding).
    """
    if alone_a["stop"] != "done" or any(_timed_out(o) for o in (obs_a, obs_b, alone_b) if o is not None):
        return []
    failed = failed_alone(other, alone_b, "the second instance's workload", own_cap=False)
    if failed is not None:
        return [failed]
    if obs_b is not None and obs_b["stop"] == "bound" and alone_b["stop"] == "done":  # stopped at the first's cap,
        alone_b = capped(alone_b, len(obs_b["steps"]))  # which its run alone (grade's, with its own cap) is not
    for name, obs, alone in (("this", obs_a, alone_a), ("the second", obs_b, alone_b)):
        if obs is None:
            continue
        diff = first_difference(alone, obs)
        if diff is not None:
            step, call, want, got = diff
            got, how = changed(call, want, got, obs, step)
            c = other.config
            return [Finding("hygiene", "H.instances", step, call,
                            f"step {step}: with a second instance (num_blocks={c.num_blocks}, block_size="
                            f"{c.block_size}, max_num_seqs={c.max_num_seqs}, max_num_batched_tokens="
                            f"{c.max_num_batched_tokens}) interleaved call by call, {name} instance's {how}; keep "
                            "all state in instance fields, not class "
                            "attributes or module globals", want, got)]
    return []


SLOW_ALONE = 8  # instances alive at once that hang are a finding when their runs alone took at most 1/8 of the limit


def hung_together(hung: dict[str, Any], alone_seconds: float, limit: float, what: str) -> Finding | None:
    """A run of instances alive at once (`what`) that ran out of time, where each instance's run alone finished and
    all of those together took at most 1/SLOW_ALONE of the limit: the hang comes from the instances meeting
    (H.timeout). judge_instances and judge_group leave such a run inconclusive, since a hang can be the machine's;
    a correct submission's instances together cost about what they cost alone, so it never comes near this one."""
    err = hung.get("error")
    if err is None or err["kind"] != "CallTimeout" or limit <= 0 or alone_seconds * SLOW_ALONE > limit:
        return None
    return Finding("hygiene", "H.timeout", err["step"], err["call"],
                   f"step {err['step']}: {what}, the run did not finish within its time limit ({limit:g} s of CPU), "
                   f"where each instance's run alone finished, all of them within 1/{SLOW_ALONE} of it; keep all "
                   "state in instance fields, not class attributes or module globals, and never wait on another "
                   "instance")  # no measured time in the words: a regrade gives the same report


def judge_group(lanes: Sequence[Workload], alone: Sequence[dict[str, Any]], together: Sequence[dict[str, Any] | None]
                ) -> tuple[Finding | None, Workload]:
    """Judge schedulers alive at once (a reach tier's group) against each one's run alone (H.instances): the first
    lane whose calls differ, with its finding, else the first lane. `check` and `grade` both judge with this;
    a lane None in `together` never ran (an earlier one failed to start).

    A lane whose run alone fails is a finding of its own (failed_alone: those runs are made only to compare with),
    and a group with a lane out of time, alone or together, is inconclusive.
    """
    for i, (w, own) in enumerate(zip(lanes, alone, strict=True)):
        failed = failed_alone(w, own, f"scheduler {i + 1} of a group of {len(lanes)}")
        if failed is not None:
            return failed, w
    if any(o["stop"] != "done" for o in alone) or any(o is not None and _timed_out(o) for o in together):
        return None, lanes[0]
    for i, (w, observed, own) in enumerate(zip(lanes, together, alone, strict=True)):
        diff = None if observed is None else first_difference(own, observed)
        if diff is not None and observed is not None:
            step, call, want, got = diff
            got, how = changed(call, want, got, observed, step)
            c = w.config
            return Finding("hygiene", "H.instances", step, call,
                           f"step {step}: with {len(lanes)} schedulers alive at once, each with its own config, "
                           f"number {i + 1} (num_blocks={c.num_blocks}, block_size={c.block_size}, max_num_seqs="
                           f"{c.max_num_seqs}, max_num_batched_tokens={c.max_num_batched_tokens}) differs from its run "
                           f"alone: its {how}; keep all state in instance fields, not class attributes, module "
                           "globals or tables sized for fewer instances",
                           want, got), w
    return None, lanes[0]


def group_finding(lanes: list[Workload], factory: Factory) -> tuple[Finding | None, Workload]:
    """The first lane of a group whose calls differ from its run alone, with its finding (else the first lane).

    Each distinct lane runs alone once. A group with a lane the submission does not finish alone is not run
    together: the lane's failure is the finding (judge_group), or, out of time, the group is inconclusive.
    """
    alone: dict[Workload, dict[str, Any]] = {}
    began = time.process_time()
    for w in lanes:
        if w not in alone:
            alone[w] = run_workload(w, factory, white_box=False)
    alone_seconds = time.process_time() - began
    if any(o["stop"] != "done" for o in alone.values()):
        return judge_group(lanes, [alone[w] for w in lanes], [None] * len(lanes))
    cap = 4 * max(len(o["steps"]) for o in alone.values()) + 16
    together = interleave(lanes, apart(factory), cap)
    _after(factory, together[:1])
    found, lane = judge_group(lanes, [alone[w] for w in lanes], together)
    if found is None and _timed_out(together[0]):  # the group ran out of time where each alone was quick
        found = hung_together(together[0], alone_seconds, RUN_SECONDS, f"with {len(lanes)} schedulers alive at once")
    return found, lane


def capped(observed: dict[str, Any], steps: int) -> dict[str, Any]:
    """A finished run as it stood after `steps` steps, stopped there at a cap (stop "bound"): the second instance of a
    pair runs together only as long as the first may, and is compared with its run alone up to there."""
    if len(observed["steps"]) <= steps:
        return observed
    return {**observed, "steps": observed["steps"][:steps], "stop": "bound", "error": None}


def failed_alone(w: Workload, observed: dict[str, Any], what: str, own_cap: bool = True) -> Finding | None:
    """A run of `w` alone, made only to compare instances with, that did not finish: the comparison cannot be made,
    and `w` is feasible, so the failure is a finding of its own, the comparison's (H.instances: in a grade such a run
    meets what earlier runs left in the process, which `check` runs apart), naming the rule hygiene or liveness
    gives the run. A run out of time is inconclusive (a loaded machine can cause it),
    and so is one stopped at a cap not its own (`own_cap` False: the second instance of a pair runs alone only as
    long as the first may); None for a run that finished."""
    if observed["stop"] == "done" or _timed_out(observed) or (observed["stop"] == "bound" and not own_cap):
        return None
    found = next(iter(checkers.hygiene(w, observed) + checkers.liveness(w, observed)), None)
    if found is None:  # stopped where neither check sees a failure: nothing to name
        return None
    return Finding("hygiene", "H.instances", found.step, found.call, f"{what}, run alone to compare instances with, "
                   f"did not finish ({found.rule}): {found.message}")


def _timed_out(observed: dict[str, Any]) -> bool:
    return observed["error"] is not None and observed["error"]["kind"] == "CallTimeout"


# --- process history --------------------------------------------------------------------

CONFIRM_MAX = 8  # failing runs of one check rerun on a freshly loaded copy before its failures are put down to history


def after_history(finding: Finding) -> Finding:
    """A check's failure that a freshly loaded copy of the submission does not reproduce, as hygiene's [H.history].

    State that outlives a Scheduler (a module global, a class attribute, a mutable default argument, a
    table keyed by id()) can make a run fail only because of the runs before it in the same process.
    That is a real fault, but not the check's: the run passes on its own, and its trace would replay as a
    pass. So `check` and `grade` confirm a check's failures on a fresh copy (up to CONFIRM_MAX of them,
    conformance/checks/fresh.py in process, conformance/grading/judge.py in one more sandboxed child),
    and when none reproduces the check goes on looking and hygiene fails with this finding. Its `actual` is
    the original finding, for the replay's prelude.
    """
    return Finding("hygiene", "H.history", finding.step, finding.call,
                   f"{finding.check} [{finding.rule}] fails here only after earlier runs in the same process "
                   f"({finding.message}); the same run passes on a freshly loaded copy of the submission: keep all "
                   "state on the instance (no module globals, class attributes, mutable default arguments or "
                   "tables keyed by id() that outlive it)", None, finding.to_json(), finding.explanation)


def before_history(finding: Finding) -> Finding:
    """The finding an [H.history] finding was made from (after_history), as its check reported it."""
    d = finding.actual
    return Finding(d["check"], d["rule"], d["step"], d["call"], d["message"], d["expected"], d["actual"],
                   tuple(d["explanation"]))


Prelude = list[dict[str, Any]]  # [{"mode": "before" | "interleaved", "workload": workload JSON}], or
# [{"mode": "repeat", "times": n}]

# The most runs of a counterexample, one after another in one process, that a replay of an [H.history] finding
# takes. State keyed by id() comes back when a new instance lands at a freed one's address, which the allocator
# decides: after a few dozen runs of the same small workload, in the runs measured, never at a fixed count.
REPEAT_MAX = 2**8


def prelude_json(mode: str, workloads: list[Workload]) -> Prelude:
    """The history a finding needs, in the trace's JSON form."""
    return [{"mode": mode, "workload": workload_to_json(w)} for w in workloads]


def repeat_json(times: int = REPEAT_MAX) -> Prelude:
    """A history that no fixed prelude rebuilds: replay runs the counterexample up to `times` times in one process
    and reports its first failing run."""
    return [{"mode": "repeat", "times": times}]


def group_json(lanes: Sequence[Workload]) -> Prelude:
    """A group of schedulers alive at once (a reach tier's): replay runs them all, call by call, and judges each
    against its run alone; the counterexample is one of the lanes."""
    return prelude_json("group", list(lanes))


def parse_prelude(obj: object) -> tuple[list[Workload], Workload | None]:
    """The workloads to run before (each to completion) and the one to interleave with, from a trace's prelude."""
    before: list[Workload] = []
    beside: Workload | None = None
    for item in obj if isinstance(obj, list) else []:
        if item.get("mode") in ("repeat", "group"):
            continue
        w = workload_from_json(item["workload"])
        if item.get("mode") == "interleaved":
            beside = w
        else:
            before.append(w)
    return before, beside


def group_of(obj: object) -> list[Workload]:
    """The lanes of a group prelude (empty without one)."""
    return [workload_from_json(item["workload"]) for item in (obj if isinstance(obj, list) else [])
            if item.get("mode") == "group"]


def repeats(obj: object) -> int:
    """How many times a replay may run the counterexample in one process (1 unless its prelude says "repeat")."""
    for item in obj if isinstance(obj, list) else []:
        if item.get("mode") == "repeat":
            times = item.get("times")
            if type(times) is not int or not 1 <= times <= REPEAT_MAX:
                raise ValueError(f"prelude 'times' must be an int in 1..{REPEAT_MAX}, got {times!r}")
            return times
    return 1


def run_prelude(before: list[Workload], factory: Factory) -> None:
    """Run earlier instances to completion (their findings are not the point: the state they leave is)."""
    for w in before:
        run_workload(w, factory, white_box=False)
