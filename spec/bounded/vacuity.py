"""Every claim can fail: each claim's formula, judged on concrete steps, says what its statement in execute.py says.

BMC asks whether a claim's formula can be broken. A formula weakened by mistake (NP's ``!=`` made ``<``, a
conjunct of I1 dropped, a slot skipped) is broken less often, and it still reads "proved". So every formula
of ``checks.broken_at`` is evaluated here, without a solver, on the steps of spec/rules.py and of each fault
of spec/faults.py, run on the validation's workloads, where the claims do break. On every step the formula
must say what the claim's statement in spec/bounded/execute.py says (the statement the model checker
judges), and each claim must be seen broken on at least ``quotas.QUOTA`` steps. A claim weakened on either
side then disagrees on some step, and a claim that no step breaks is reported as such.

FA and FD read flags that the encoding computes (``budget_out``, ``multi_victim``), not a formula over
states: the drawn states of offstates.py compare those flags with the spec's own decisions. unwind is the
encoding's own claim. OUT and LIVE are judged per run. OUT is compared both ways, on the outputs of the
sequences both runs finished within the steps evaluated and on draining by the liveness bound. LIVE is
compared one way: its ranking function is stronger than the bound, and it may break on a faulty module
that still drains in time. On spec/rules.py itself no formula may break.
"""

from __future__ import annotations

import random
import time
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

import z3

import spec.rules
from spec import faults
from spec.bounded import checks, quotas, validate
from spec.bounded.encode import Bounds, Inputs, Snap
from spec.bounded.evaluate import Compiled, Value
from spec.bounded.execute import Step, ample, drained, live_broken, outputs, run, step_violations
from spec.bounded.induction import free_state
from spec.bounded.transition import Run
from spec.bounded.witness import Slots, concrete, pinned, snap_pairs
from spec.feasible import liveness_bound
from spec.model import Policy, Seq, State, Status
from spec.trace import Request, Workload

STEP_CLAIMS = ("I1", "I2", "I3", "I4", "I5", "I6", "FB", "FC", "NP", "BO", "FR", "CH", "AD")
RUN_CLAIMS = ("OUT", "LIVE")
JUDGED = STEP_CLAIMS + RUN_CLAIMS
ELSEWHERE = {"FA": "a flag of the encoding, compared with the spec's P1.budget events on drawn states",
             "FD": "a flag of the encoding, compared with the spec's preemption events on drawn states",
             "unwind": "the encoding's own claim"}
WORKLOADS = 40  # of the validation's stream, per module; as many short ones
# Short workloads: a crowd on a small budget and few seats, drained within the steps evaluated when nothing is
# wrong, so that FB, I6 and LIVE (the liveness bound) can break; the stream's long prompts rarely let them.
SHORT = Bounds(slots=3, steps=10, num_blocks=6, block_size=4, budget=3, max_num_seqs=2, prompt_len=2, max_tokens=2,
               arrival=2)
PER_STATE = 4  # changes drawn per state of a correct run (after schedule(), after update())


class Fixed(Run):
    """A run whose states are free constants, for a concrete run's values to be given to: each claim's formula
    over it is then a function of those values. Nothing is unrolled (Run.__init__ is not called)."""

    def __init__(self, bounds: Bounds, tag: str) -> None:  # pylint: disable=super-init-not-called
        n, steps = bounds.slots, bounds.steps
        self.b, self.x, self.tag = bounds, Inputs.fresh(bounds, tag), tag
        self.fault, self.first_eos = None, None
        self.defs = []
        self.unwind = [[] for _ in range(steps)]
        self.pre = [free_state(n, f"pre{k}{tag}") for k in range(steps + 1)]
        self.mid = [free_state(n, f"mid{k}{tag}") for k in range(steps + 1)]
        self.post = [free_state(n, f"post{k}{tag}") for k in range(steps + 1)]
        for flag in ("preempted_now", "budget_out", "multi_victim", "preempted_other", "preempted_self",
                     "held_whole"):
            setattr(self, flag, [z3.Bool(f"{flag}{k}{tag}") for k in range(steps)])
        self.marks = list(range(steps + 1))


@dataclass(frozen=True, slots=True)
class Frame:
    """One step of a concrete run: after its arrivals, after schedule(), after update(), and each sequence's
    draws before and after it."""

    pre: State
    mid: State
    post: State
    drawn_before: Mapping[str, int]
    drawn_after: Mapping[str, int]


def frames(workload: Workload, steps: tuple[Step, ...], k_max: int) -> tuple[Frame, ...]:
    """`k_max` frames of a run; a run that drained (or stopped) stands still after its last step."""
    out: list[Frame] = []
    drawn: dict[str, int] = {}
    last = steps[-1].after_update if steps else spec.rules.initial_state(workload.config)
    for k in range(1, k_max + 1):
        before = dict(drawn)
        if k > len(steps):
            out.append(Frame(last, last, last, before, before))
            continue
        s = steps[k - 1]
        for seq_id, _ in s.tokens:
            drawn[seq_id] = drawn.get(seq_id, 0) + 1
        out.append(Frame(s.before, s.after_schedule, s.after_update, before, dict(drawn)))
    return tuple(out)


def padded(workload: Workload, bounds: Bounds) -> tuple[Request, ...]:
    """The requests as the encoding holds them: a slot with no request has one of (1, 1) arriving after the
    horizon (witness.pinned)."""
    absent = (Request(f"absent{j}", 1, 1, bounds.steps + 1) for j in range(len(workload.requests), bounds.slots))
    return workload.requests + tuple(absent)


class Formulas:
    """The formulas of claims `names` at every step of a run of `bounds.steps` steps, compiled once."""

    def __init__(self, bounds: Bounds, names: tuple[str, ...]) -> None:
        self.b = bounds
        self.tight, self.ample = Fixed(bounds, "t"), Fixed(bounds, "a")
        self.terms: dict[tuple[str, int], z3.BoolRef] = {}
        for name in names:
            bad = checks.broken_at(name, self.tight, self.ample)
            for k in range(1, bounds.steps + 1):
                self.terms[(name, k)] = bad(k)
        self.compiled = Compiled([], self.terms.values())
        self._names: dict[int, str] = {}

    def _name(self, t: z3.ExprRef) -> str:
        i = t.get_id()
        if i not in self._names:
            self._names[i] = str(t)
        return self._names[i]

    def _fill(self, env: dict[str, Value], fixed: Run, w: Workload, start: State, run_: tuple[Frame, ...]) -> None:
        for t, v in pinned(fixed.x, w, self.b):
            env[self._name(t)] = v
        index = {r.seq_id: j for j, r in enumerate(w.requests)}
        n = self.b.slots
        self._snap(env, fixed.post[0], concrete(start, Slots(index, run_[0].drawn_before), n))
        for k, f in enumerate(run_, 1):
            self._snap(env, fixed.pre[k], concrete(f.pre, Slots(index, f.drawn_before), n))
            self._snap(env, fixed.mid[k], concrete(f.mid, Slots(index, f.drawn_before), n))
            self._snap(env, fixed.post[k], concrete(f.post, Slots(index, f.drawn_after), n))

    def _snap(self, env: dict[str, Value], free: Snap, values: Snap) -> None:
        for t, value in snap_pairs(free, values):
            env[self._name(t)] = value

    def evaluate(self, w: Workload, start: State, tight: tuple[Frame, ...],
                 roomy: tuple[Frame, ...] = ()) -> dict[tuple[str, int], bool]:
        """Each formula's value, (claim, k) -> broken, on the run from `start` (and, for OUT, its ample twin)."""
        env: dict[str, Value] = {}
        self._fill(env, self.tight, w, start, tight)
        if roomy:
            wide = ample(w)
            self._fill(env, self.ample, wide, spec.rules.initial_state(wide.config), roomy)
        values = self.compiled(env)
        return {key: bool(values[t.get_id()]) for key, t in self.terms.items() if roomy or key[0] != "OUT"}


def said_by_statements(s: Step, before: State, requests: tuple[Request, ...]) -> dict[str, bool]:
    """Each step claim and LIVE as execute.py's statements judge step `s`; `before`: the state it started from."""
    broken = step_violations(s)
    out = {name: name in broken for name in STEP_CLAIMS}
    out["LIVE"] = live_broken(before, s, requests) is not None
    return out


@dataclass(frozen=True, slots=True)
class Disagreement:
    module: str
    workload: Workload
    claim: str
    step: int  # 0: the run as a whole
    formula: bool
    statement: bool

    def __str__(self) -> str:
        where = f"step {self.step}" if self.step else "the run"
        return (f"{self.module}, workload {self.workload.config} {self.workload.requests} eos "
                f"{self.workload.sample.eos_at}: {self.claim} at {where}: the formula of checks.broken_at says "
                f"{'broken' if self.formula else 'holds'}, its statement (spec/invariants.py, execute.py) says "
                f"{'broken' if self.statement else 'holds'}")



@dataclass(slots=True)
class Tally:
    """Steps judged, claims seen broken (by a fault's run, by a changed step), and every disagreement."""

    by_faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(JUDGED, 0))
    by_changes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STEP_CLAIMS + ("LIVE",), 0))
    runs: int = 0
    judged: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)

    def judge(self, module: str, w: Workload, claim: str, step: int, formula: bool, statement: bool,
              changed: bool = False) -> None:
        self.judged += 1
        if formula != statement or (module == "spec.rules" and formula):  # nothing breaks on the spec's own runs
            self.disagreements.append(Disagreement(module, w, claim, step, formula, statement))
        elif formula:
            counts = self.by_changes if changed else self.by_faults
            counts[claim] += 1

    def short(self) -> list[str]:
        return [f"{name} ({source})" for source, counts in (("faults", self.by_faults), ("changed steps",
                                                                                      self.by_changes))
                for name, count in counts.items() if count < quotas.QUOTA]


def judge(module: str, w: Workload, tight: tuple[Step, ...], roomy: tuple[Step, ...], formulas: Formulas,
          tally: Tally) -> None:
    """Every step claim and LIVE at every step run without error, and OUT over the run: formula vs statement."""
    b = formulas.b
    start = spec.rules.initial_state(w.config)
    said = formulas.evaluate(w, start, frames(w, tight, b.steps), frames(w, roomy, b.steps))
    requests = padded(w, b)
    tally.runs += 1
    before = start
    for s in tight[:b.steps]:
        if s.error is not None:
            break
        twice = len({seq_id for seq_id, _ in s.batch}) < len(s.batch)  # a Snap holds one entry per slot
        for name, statement in said_by_statements(s, before, requests).items():
            if not twice or name in WELL_FORMED["a batch entry twice"]:
                tally.judge(module, w, name, s.step, said[(name, s.step)], statement)
        before = s.after_update
    if any(s.error is not None for s in tight[:b.steps] + roomy[:b.steps]):
        return
    a, r = outputs(tight[:b.steps]), outputs(roomy[:b.steps])
    late = liveness_bound(requests) <= b.steps and not (drained(tight[:b.steps]) and drained(roomy[:b.steps]))
    statement = any(a[i] != r[i] for i in a.keys() & r.keys()) or late
    tally.judge(module, w, "OUT", 0, any(said[("OUT", k)] for k in range(1, b.steps + 1)), statement)


def _edit(state: State, seq_id: str, **changes: object) -> State:
    def one(queue: tuple[Seq, ...]) -> tuple[Seq, ...]:
        return tuple(replace(q, **changes) if q.seq_id == seq_id else q for q in queue)  # type: ignore[arg-type]
    return replace(state, waiting=one(state.waiting), running=one(state.running), finished=one(state.finished))


# A Snap holds one record per slot, its status apart from the queues, and one batch entry per slot. A change that
# makes a sequence's status disagree with its queue, lists a sequence twice or schedules a finished one breaks I6
# or I2 on both sides;
# what the other claims say of such a state depends on which of the two a statement reads (the formulas read
# status, the statements the queues), so only these are compared on it.
WELL_FORMED = {"waiting[0] twice": ("I6",), "a batch entry twice": ("I2",), "a finished sequence in the batch": ("I2",),
               **{f"status {st.name}": ("I6",) for st in Status}}


def changes(rng: random.Random, s: State, batch: bool) -> list[tuple[str, State]]:
    """PER_STATE single changes of `s`, drawn: a field of one sequence, a counter, the queues' order or
    membership, and (after schedule()) the batch."""
    options: list[tuple[str, State]] = []
    if s.seqs():
        q = rng.choice(s.seqs())
        options += [("num_computed + 1", _edit(s, q.seq_id, num_computed=q.num_computed + 1)),
                    ("num_computed - 1", _edit(s, q.seq_id, num_computed=q.num_computed - 1)),
                    ("num_blocks + 1", _edit(s, q.seq_id, num_blocks=q.num_blocks + 1)),
                    ("num_blocks - 1", _edit(s, q.seq_id, num_blocks=q.num_blocks - 1)),
                    *((f"status {st.name}", _edit(s, q.seq_id, status=st)) for st in Status if st is not q.status)]
        if not batch:  # after schedule(), update() would read the token's value, which a Snap does not hold
            options.append(("a token more", _edit(s, q.seq_id, output=q.output + (999,))))
        if q.output:
            options.append(("a token less", _edit(s, q.seq_id, output=q.output[:-1])))
    options += [("blocks_used + 1", replace(s, blocks_used=s.blocks_used + 1)),
                ("blocks_used - 1", replace(s, blocks_used=s.blocks_used - 1)),
                ("num_preemptions + 1", replace(s, num_preemptions=s.num_preemptions + 1)),
                ("num_preemptions - 1", replace(s, num_preemptions=s.num_preemptions - 1))]
    fresh = [q for q in s.running if q.num_computed == 0]  # admitted this step: the one way below zero I3 reads
    if fresh:
        options.append(("a fresh admission's num_computed - 1", _edit(s, fresh[0].seq_id, num_computed=-1)))
    if s.running:
        r = s.running[-1]
        bs = s.config.block_size
        options += [("running[-1] computes a block more, and holds it",
                     replace(s, running=s.running[:-1] + (replace(r, num_computed=r.num_computed + bs,
                                                                  num_blocks=r.num_blocks + 1),),
                             blocks_used=s.blocks_used + 1)),
                    ("running[-1] takes a block more",
                     replace(s, running=s.running[:-1] + (replace(r, num_blocks=r.num_blocks + 1),),
                             blocks_used=s.blocks_used + 1)),
                    ("running[-1] to waiting's head",
                     replace(s, running=s.running[:-1], waiting=(replace(r, status=Status.WAITING),) + s.waiting)),
                    ]
    if s.waiting:
        options.append(("waiting[0] twice", replace(s, waiting=s.waiting[:1] + s.waiting)))
        options.append(("waiting[0] to running", replace(s, waiting=s.waiting[1:], running=s.running + (
            replace(s.waiting[0], status=Status.RUNNING),))))
    for name in ("running", "waiting"):
        queue = getattr(s, name)
        if len(queue) >= 2:
            options.append((f"{name}[0] and [1] swapped", replace(s, **{name: (queue[1], queue[0]) + queue[2:]})))
    pending = s.pending or ()
    if batch and pending:
        i = rng.randrange(len(pending))
        seq_id, n = pending[i]
        options += [("a batch entry's n + 1", replace(s, pending=pending[:i] + ((seq_id, n + 1),) + pending[i + 1:])),
                    ("a batch entry's n - 1", replace(s, pending=pending[:i] + ((seq_id, n - 1),) + pending[i + 1:])),
                    ("a batch entry twice", replace(s, pending=pending + (pending[i],))),
                    ("a batch entry dropped", replace(s, pending=pending[:i] + pending[i + 1:]))]
        if len(pending) >= 2:
            options.append(("batch[0] and [1] swapped", replace(s, pending=(pending[1], pending[0]) + pending[2:])))
        if s.finished:  # I2: only waiting or running sequences are scheduled
            options.append(("a finished sequence in the batch", replace(s, pending=pending + ((s.finished[0].seq_id,
                                                                                               1),))))
    drawn = rng.sample(options, min(PER_STATE, len(options)))
    if s.waiting and len(s.running) >= s.config.max_num_batched_tokens:  # FB's only way to break, and a rare one
        drawn += [o for o in options if o[0] == "waiting[0] to running" and o not in drawn]
    return drawn


def judge_changed(rng: random.Random, w: Workload, steps: tuple[Step, ...], one: Formulas, tally: Tally) -> None:
    """Each step of a correct run, changed in a few drawn ways after schedule() (the batch with it) or after
    update(), judged by the formulas of one step and by the statements (the step numbered 1: the liveness bound,
    which the changed step's number would decide, plays no part)."""
    requests = padded(w, one.b)
    before = spec.rules.initial_state(w.config)
    for s, frame in zip(steps, frames(w, steps, len(steps)), strict=True):
        for where in ("after_schedule", "after_update"):
            for name, state in changes(rng, getattr(s, where), where == "after_schedule"):
                if where == "after_schedule":  # update() applied the batch schedule() returned
                    c = replace(s, step=1, after_schedule=state, batch=state.pending or ())
                else:
                    c = replace(s, step=1, after_update=state)
                said = one.evaluate(w, before, (replace(frame, mid=c.after_schedule, post=c.after_update),))
                for claim, statement in said_by_statements(c, before, requests).items():
                    if claim not in WELL_FORMED.get(name, (claim,)):
                        continue
                    tally.judge(f"spec.rules, step {s.step} {where}: {name}", w, claim, 1, said[(claim, 1)],
                                statement, changed=True)
        before = s.after_update


def modules(skipped: list[str] | None = None) -> Iterator[tuple[str, types.ModuleType]]:
    """spec/rules.py, then every fault of spec/faults.py that is an edit of it. A fault whose text is no longer
    in spec/rules.py (a line it edits was changed) is left out and named in `skipped`: the row goes on with the
    others (tests/proofs/test_faults.py is where a stale fault fails)."""
    yield "spec.rules", spec.rules
    for name in [*faults.BY_NAME, *faults.GUARDS, *faults.OBSERVABLE]:
        try:
            module = faults.load(name)
        except faults.FaultError:
            if skipped is not None:
                skipped.append(name)
            continue
        yield name, module


def vacuity_row(count: int = WORKLOADS, policy: Policy = validate.STREAM.policy,
                only: tuple[tuple[str, types.ModuleType], ...] | None = None) -> dict[str, object]:
    """The row `claims can fail`: formulas against statements on the runs of spec/rules.py and of every fault,
    on `count` workloads of the validation's stream and `count` short ones, and on changed steps of the
    correct runs."""
    t = time.perf_counter()
    bounds = replace(validate.STREAM, policy=policy)
    formulas = Formulas(bounds, JUDGED)
    one = Formulas(replace(bounds, steps=1), STEP_CLAIMS + ("LIVE",))
    tally = Tally()
    rng = random.Random(f"{validate.SEED}-vacuity-{policy}")
    short = replace(SHORT, policy=policy)
    workloads = list(validate.stream(validate.SEED, count, bounds)) + [validate.candidate(rng, short)
                                                                       for _ in range(count)]
    skipped: list[str] = []
    for module_name, rules in only or tuple(modules(skipped)):
        for w in workloads:
            try:
                tight, roomy = run(rules, w, bounds.steps), run(rules, ample(w), bounds.steps)
            except Exception:  # noqa: BLE001 - add() refused a request (a guard fault): nothing to judge here
                continue
            judge(module_name, w, tight, roomy, formulas, tally)
            if rules is spec.rules:
                judge_changed(rng, w, tight, one, tally)
    short_of = tally.short()
    verdict = "disagree" if tally.disagreements else "vacuous" if short_of else "agree"
    return {"claim": "claims can fail", "kind": "vacuity", "workloads": 2 * count, "runs": tally.runs,
            "quota": quotas.QUOTA,
            "judged": tally.judged, "broken_by_faults": tally.by_faults, "broken_by_changes": tally.by_changes,
            "short": short_of, "elsewhere": ELSEWHERE, "verdict": verdict, "faults_not_applied": skipped,
            "first_difference": str(tally.disagreements[0]) if tally.disagreements else None,
            "disagreements": len(tally.disagreements), "seconds": round(time.perf_counter() - t, 2)}
