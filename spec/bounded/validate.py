"""Translation validation: the hand-written z3 encoding computes what spec/rules.py computes.

For each workload of a deterministic stream, every input of the encoding is fixed
to the workload's and the solver's trace is read back step by step; it must equal
the trace of ``spec.rules`` run with the proofs' sampler (``execute.Draws``):
after every schedule() and update(), every field of every sequence (status,
num_computed, num_blocks, output tokens), blocks_used, num_preemptions, waiting
and running in order, the batch in order, the tokens drawn in order and the
finished sequences in order, and the flags the claims read (``FLAGS``) against the
spec's own decisions. The stream is built to preempt: at least 34% of its steps
preempt, and it contains self-preemptions, two preemptions in one step and a victim
readmitted in the step that preempted it (``Stats``); then ``quotas.top_up`` adds
workloads until every kind of step has its quota at every block size.
"""

from __future__ import annotations

import random
import types
from collections.abc import Iterator
from dataclasses import dataclass

import z3

import spec.rules
from spec.bounded import quotas
from spec.bounded.encode import Bounds, Inputs, Snap, var
from spec.bounded.evaluate import Compiled, Values
from spec.bounded.execute import Step, fd_broken, run
from spec.bounded.transition import Run
from spec.bounded.witness import pinned, read, val
from spec.feasible import tightest_num_blocks
from spec.model import DEFAULT_POLICY, Config, Event, State
from spec.trace import Request, Workload, make_workload

STREAM = Bounds(slots=3, steps=10)  # the stream's scope: the claims' full input ranges, three requests
QUICK_COUNT = 100  # workloads in `prove --quick` and the default tests
SLOW_COUNT = 10_000  # workloads under `pytest -m slow`
SEED = 2026
# The encoding's per-step flags that claims and reach queries read (FA: budget_out, FD: multi_victim; preempted_now
# gates vllm-v1's phase 2; reach.py: the kinds of preemption, P2.whole), each compared with the spec's own decisions
# at every step (``spec_flags``).
FLAGS = ("budget_out", "multi_victim", "preempted_now", "preempted_other", "preempted_self", "held_whole")


@dataclass(slots=True)
class Stats:
    """What the stream exercised, counted on the spec's runs."""

    workloads: int = 0
    steps: int = 0
    preempting_steps: int = 0  # steps in which phase 1 preempted someone
    self_preemptions: int = 0  # P1.skip_self decisions
    double_preemptions: int = 0  # steps with two or more preemptions
    readmissions: int = 0  # a victim admitted again by phase 2 in the step that preempted it
    filled_by_admission: int = 0  # steps in which phase 2 admitted and then stopped at max_num_seqs (P2.full)
    held_by_policy: int = 0  # steps in which vllm-v1 admitted nobody because phase 1 preempted (P2.policy)
    held_whole: int = 0  # steps in which vllm-v1 kept the head waiting: its whole sequence would not fit (P2.whole)
    quotas: quotas.Quotas | None = None  # compared steps per kind of step and block size

    @property
    def preempting_share(self) -> float:
        return self.preempting_steps / self.steps if self.steps else 0.0

    def count(self, steps: tuple[Step, ...]) -> None:
        self.workloads += 1
        if self.quotas is not None:
            self.quotas.count(steps)
        for s in steps:
            self.steps += 1
            n = s.after_schedule.num_preemptions - s.before.num_preemptions
            self.preempting_steps += n > 0
            self.double_preemptions += n > 1
            self.self_preemptions += sum(e.rule == "P1.skip_self" for e in s.events)
            victims = {quotas.victim(e.message) for e in s.events if e.rule in quotas.PREEMPTS}
            self.readmissions += sum(e.rule == "P2" and e.seq_id in victims for e in s.events)
            labels = [e.rule for e in s.events]
            self.filled_by_admission += "P2.full" in labels and "P2" in labels[:labels.index("P2.full")]
            self.held_by_policy += "P2.policy" in labels
            self.held_whole += "P2.whole" in labels


def spec_flags(events: tuple[Event, ...]) -> list[bool]:
    """FLAGS as the spec's decisions state them: a P1.budget stop, a sequence that preempted twice to grow, any
    preemption, one of another sequence, one of itself, a head held back by P2.whole."""
    rules = [e.rule for e in events]
    return ["P1.budget" in rules, bool(fd_broken(events)), any(r in quotas.PREEMPTS for r in rules),
            "P1.preempt" in rules, "P1.skip_self" in rules, "P2.whole" in rules]


def candidate(rng: random.Random, b: Bounds) -> Workload:
    """A random feasible workload within `b`. Half are built to thrash (short prompts, small blocks, early
    arrivals, a cache the size of the largest peak), half are drawn from the whole range."""
    while True:
        thrash = rng.random() < 0.5
        bs = min(b.block_size, rng.choice((1, 2) if thrash else (1, 2, 3, 4)))
        n = b.slots if thrash else rng.randint(1, b.slots)
        reqs = sorted((Request("", rng.randint(1, min(3, b.prompt_len) if thrash else b.prompt_len),
                               rng.randint(max(1, b.max_tokens - 1) if thrash else 1, b.max_tokens),
                               rng.choice((1, 1, 2)) if thrash else rng.randint(1, b.last_arrival // 2 or 1))
                       for _ in range(n)), key=lambda r: r.arrival)
        names = [f"s{k}" for k in rng.sample(range(10), n)]  # ids whose sorted order is not the arrival order
        reqs = [Request(names[i], r.prompt_len, r.max_tokens, r.arrival) for i, r in enumerate(reqs)]
        peak = tightest_num_blocks(bs, reqs)
        if peak > b.num_blocks:
            continue
        num_blocks = peak if thrash else rng.randint(peak, b.num_blocks)
        seqs = b.max_num_seqs if thrash else rng.randint(1, b.max_num_seqs)
        budget = rng.randint(min(n, b.budget), b.budget) if thrash else rng.randint(1, b.budget)
        eos = {r.seq_id: [k for k in range(r.max_tokens) if rng.random() < 0.1] for r in reqs}
        return make_workload(Config(num_blocks, bs, seqs, budget, 0, b.policy), reqs, eos_at=eos)


def stream(seed: int, count: int, b: Bounds = STREAM) -> Iterator[Workload]:
    """`count` workloads: first one of each kind of step the stream must contain (a self-preemption, two
    preemptions in one step, a readmission in the same step (under vllm-v1: a step that admits nobody because
    it preempted), admissions up to max_num_seqs), then those whose
    run preempts in at least 34% of its steps, and one candidate in 500 of the others (a preemption-free run
    checks the plain rules)."""
    rng = random.Random(seed)
    missing = {"self_preemptions", "double_preemptions", "filled_by_admission"} | \
        ({"readmissions"} if b.policy == DEFAULT_POLICY else {"held_by_policy", "held_whole"})  # vllm-v1 never readmits
    while count:
        w = candidate(rng, b)
        try:
            steps = run(spec.rules, w, b.steps)
        except Exception:  # noqa: BLE001 - a spec that refuses or fails on a feasible workload: compare it first
            count -= 1
            yield w
            continue
        share = sum(s.after_schedule.num_preemptions > s.before.num_preemptions for s in steps) / len(steps)
        seen = Stats()
        seen.count(steps)
        new = {kind for kind in missing if getattr(seen, kind)}
        if new or share >= 0.34 or rng.random() < 0.002:
            missing -= new
            count -= 1
            yield w


def workloads(seed: int, count: int, b: Bounds = STREAM) -> Iterator[Workload]:
    """The stream's first `count` workloads, then those ``quotas.top_up`` draws for the cells still short."""
    filled = quotas.new_quotas(b)
    for w in stream(seed, count, b):
        filled.count(run(spec.rules, w, b.steps))
        yield w
    for w in quotas.top_up(seed, b, filled):
        filled.count(run(spec.rules, w, b.steps))
        yield w


def snapshot(state: State, slots: int, slot: dict[str, str]) -> dict[str, object]:
    """A spec state in the shape of ``witness.read`` (without the batch and the draw counts); `slot` names each
    sequence by its encoding slot (r0, r1, ... in arrival order)."""
    seqs = {f"r{j}": {"num_computed": 0, "num_blocks": 0, "output": [], "status": "UNARRIVED"} for j in range(slots)}
    for q in state.seqs():
        seqs[slot[q.seq_id]] = {"num_computed": q.num_computed, "num_blocks": q.num_blocks,
                                "output": list(q.output), "status": q.status.name}
    return {"running": [slot[q.seq_id] for q in state.running], "waiting": [slot[q.seq_id] for q in state.waiting],
            "blocks_used": state.blocks_used, "num_preemptions": state.num_preemptions, "seqs": seqs}


@dataclass(frozen=True, slots=True)
class Mismatch:
    workload: Workload
    step: int
    field: str
    encoding: object
    spec: object
    state: State | None = None  # the state the step started from, when not the empty one

    def __str__(self) -> str:
        start = f" from {self.state}" if self.state is not None else ""
        return (f"workload {self.workload.config} {self.workload.requests} eos {self.workload.sample.eos_at}{start}: "
                f"step {self.step}, {self.field}: encoding {self.encoding!r}, spec {self.spec!r}")


Observed = tuple[object, ...]  # after schedule(), batch, after update(), tokens drawn, finished, flags
FIELDS = ("after schedule()", "batch", "after update()", "tokens drawn", "finished", "flags " + "/".join(FLAGS))


def expected(s: Step, slots: int, slot: dict[str, str]) -> Observed:
    """What the encoding must show for the spec's step `s` (sequences named by slot)."""
    return (snapshot(s.after_schedule, slots, slot), [[slot[i], n] for i, n in s.batch],
            snapshot(s.after_update, slots, slot), [[slot[i], tok] for i, tok in s.tokens],
            [slot[i] for i in s.finished], spec_flags(s.events))


def standing(state: State, slots: int, slot: dict[str, str]) -> Observed:
    """What the encoding must show in a step after the spec drained: nothing moves."""
    snap = snapshot(state, slots, slot)
    return (snap, [], snap, [], [], [False] * len(FLAGS))


class Validator:
    """One unrolled run, evaluated on each workload's inputs (``evaluate.Compiled``), or solved (``solver=True``).

    With `init` (a Snap of free constants, as ``induction.free_state`` makes) the run starts from a state the
    caller pins too, at step `start`."""

    def __init__(self, bounds: Bounds = STREAM, rules: types.ModuleType = spec.rules,
                 fault: str | None = None, init: Snap | None = None, start: int = 1, first_eos: bool = False) -> None:
        """`fault`: build the encoding with this fault (transition.ENCODED_FAULTS); `rules` should carry it too.
        `first_eos`: the encoding's sampler is each slot's first eos draw (as the relational OUT reads it), not
        the table of eos draws."""
        self.b, self.rules = bounds, rules
        self.x = Inputs.fresh(bounds)
        self.first_eos = tuple(var(f"first_eos{j}") for j in range(bounds.slots)) if first_eos else None
        self.run = Run(bounds, self.x, fault=fault, init=init, start=start, first_eos=self.first_eos)
        terms: list[z3.ExprRef] = [u for us in self.run.unwind for u in us]
        terms += [e for row in self.x.eos for e in row]
        terms += [flag for f in FLAGS for flag in getattr(self.run, f)]
        for snap in self.run.mid[1:] + self.run.post[1:]:
            for f in snap.__slots__:
                v = getattr(snap, f)
                terms += list(v) if isinstance(v, tuple) else [v]
        self.evaluate = Compiled(self.run.defs, terms)
        self.names: list[str] = []  # the inputs' names, in the order of ``model``'s pairs

    def model(self, w: Workload, solver: bool = False,
              extra: list[tuple[z3.ExprRef, int | bool]] | None = None) -> Values | z3.ModelRef | None:
        """The encoding's values on the workload's inputs (and the `extra` ones, e.g. a start state, given in an
        order fixed for this validator); None if the pinned run has none."""
        pairs = pinned(self.x, w, self.b) + (extra or [])
        if self.first_eos is not None:  # past max_tokens when a slot draws no eos (or has no request)
            eos_at = dict(w.sample.eos_at)
            firsts = [min(eos_at.get(r.seq_id) or (self.b.max_tokens + 2,)) for r in w.requests]
            firsts += [self.b.max_tokens + 2] * (self.b.slots - len(firsts))
            pairs += list(zip(self.first_eos, firsts, strict=True))
        if not solver:
            if len(self.names) != len(pairs):  # the order is fixed: name the inputs once (printing z3 is slow)
                self.names = [str(t) for t, _ in pairs]
            return Values(self.evaluate(dict(zip(self.names, (v for _, v in pairs), strict=True))))
        s = z3.Solver()
        s.add(self.run.defs + [t == v for t, v in pairs])
        return s.model() if s.check() == z3.sat else None

    def unwound(self, m: Values | z3.ModelRef) -> bool:
        """No unrolled loop would have needed one more round."""
        return not any(val(m, u) for us in self.run.unwind for u in us)

    def observed(self, m: Values | z3.ModelRef, k: int) -> Observed:
        """The encoding's step k, in the shape of ``expected``."""
        b, x = self.b, self.x
        mid, post = read(m, self.run.mid[k], b, x), read(m, self.run.post[k], b, x)
        batch = mid.pop("batch")
        post.pop("batch")
        drawn = {j: (post["seqs"][f"r{j}"].pop("drawn"), mid["seqs"][f"r{j}"].pop("drawn"))  # type: ignore
                 for j in range(b.slots)}
        pairs: list[tuple[str, int]] = list(batch)  # type: ignore[call-overload]
        order = {i: t for t, (i, _) in enumerate(pairs)}
        got_tokens = sorted(((order[f"r{j}"], f"r{j}", tok) for j, (after, before) in drawn.items()
                             for tok in _draws(m, x, j, before, after)))
        finished = sorted((order[f"r{j}"], f"r{j}") for j in range(b.slots)
                          if post["seqs"][f"r{j}"]["status"] == "FINISHED"  # type: ignore[index]
                          and mid["seqs"][f"r{j}"]["status"] != "FINISHED")  # type: ignore[index]
        flags = [bool(val(m, getattr(self.run, f)[k - 1])) for f in FLAGS]
        return (mid, [list(p) for p in pairs], post, [[i, tok] for _, i, tok in got_tokens],
                [i for _, i in finished], flags)

    def compare(self, w: Workload, solver: bool = False) -> Mismatch | None:
        """The first field in which the encoding's trace differs from the spec's, or None."""
        b = self.b
        slot = {r.seq_id: f"r{j}" for j, r in enumerate(w.requests)}
        try:
            steps = run(self.rules, w, b.steps)
        except Exception as e:  # e.g. add() refused a request the stream drew as feasible
            return Mismatch(w, 0, "spec.rules ran", "a run", f"{type(e).__name__}: {e}")
        m = self.model(w, solver)
        if m is None:
            return Mismatch(w, 0, "satisfiable", "unsat", "a run")
        if not self.unwound(m):
            return Mismatch(w, 0, "unwind", "one more loop round needed", "none")
        last = steps[-1].after_update if steps else self.rules.initial_state(w.config)
        for k in range(1, b.steps + 1):
            want = expected(steps[k - 1], b.slots, slot) if k <= len(steps) else standing(last, b.slots, slot)
            found = first_difference(self.observed(m, k), want)
            if found is not None:
                return Mismatch(w, k, *found)
        return None


def first_difference(got: Observed, want: Observed) -> tuple[str, object, object] | None:
    """The first field (FIELDS) in which two observed steps differ, with both values; None if they agree."""
    for name, g, expected_value in zip(FIELDS, got, want, strict=True):
        if g != expected_value:
            return _where(name, g, expected_value)
    return None


def _draws(m: Values | z3.ModelRef, x: Inputs, slot: int, before: int, after: int) -> list[int]:
    from spec.bounded.witness import tokens
    return tokens(m, x, slot, before, after)


def _where(name: str, got: object, want: object) -> tuple[str, object, object]:
    """The first differing field of two snapshots (e.g. "after update() seqs.r1.output") and its two values."""
    path = name
    while isinstance(got, dict) and isinstance(want, dict):
        key = next((k for k in want if got.get(k) != want[k]), None)
        if key is None:
            break
        path, got, want = f"{path} {key}" if path == name else f"{path}.{key}", got.get(key), want[key]
    return path, got, want


def validate(count: int, seed: int = SEED, bounds: Bounds = STREAM, skip: int = 0,
             rules: types.ModuleType = spec.rules, stop: int = 1, fault: str | None = None,
             validator: Validator | None = None) -> tuple[list[Mismatch], Stats]:
    """Compare the encoding (with `fault`, if given; or `validator`, built for `bounds` and `rules`) with `rules`
    on the `skip`-th to (skip + count)-th workloads of the seed's stream, then on the workloads that fill the
    quotas (``workloads``)."""
    v = validator or Validator(bounds, rules, fault)
    stats = Stats(quotas=quotas.new_quotas(bounds))
    bad: list[Mismatch] = []
    for i, w in enumerate(workloads(seed, skip + count, bounds)):
        if i < skip:
            continue
        found = v.compare(w)
        if found is None:
            stats.count(run(rules, w, bounds.steps))
        else:
            bad.append(found)
            if len(bad) >= stop:
                break
    return bad, stats


__all__ = ["Mismatch", "Stats", "Validator", "stream", "validate", "workloads"]
