"""Translation validation: the hand-written z3 encoding computes what spec/rules.py computes.

For each workload of a deterministic stream, every input of the encoding is fixed
to the workload's and the solver's trace is read back step by step; it must equal
the trace of ``spec.rules`` run with the proofs' sampler (``execute.Draws``):
after every schedule() and update(), every field of every sequence (status,
num_computed, num_blocks, output tokens), blocks_used, num_preemptions, waiting
and running in order, the batch in order, the tokens drawn in order and the
finished sequences in order. The stream is built to preempt: at least 34% of its
steps preempt, and it contains self-preemptions, two preemptions in one step and
a victim readmitted in the step that preempted it (``Stats``).
"""

from __future__ import annotations

import random
import types
from collections.abc import Iterator
from dataclasses import dataclass

import z3

import spec.rules
from spec.bounded.encode import Bounds, Inputs
from spec.bounded.evaluate import Compiled, Values, assignment
from spec.bounded.execute import Step, run
from spec.bounded.transition import Run
from spec.bounded.witness import pin, read, val
from spec.feasible import tightest_num_blocks
from spec.model import DEFAULT_POLICY, Config, State
from spec.trace import Request, Workload, make_workload

STREAM = Bounds(slots=3, steps=10)  # the stream's scope: the claims' full input ranges, three requests
QUICK_COUNT = 100  # workloads in `prove --quick` and the default tests
SLOW_COUNT = 10_000  # workloads under `pytest -m slow`
SEED = 2026


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

    @property
    def preempting_share(self) -> float:
        return self.preempting_steps / self.steps if self.steps else 0.0

    def count(self, steps: tuple[Step, ...]) -> None:
        self.workloads += 1
        for s in steps:
            self.steps += 1
            n = s.after_schedule.num_preemptions - s.before.num_preemptions
            self.preempting_steps += n > 0
            self.double_preemptions += n > 1
            self.self_preemptions += sum(e.rule == "P1.skip_self" for e in s.events)
            victims = {_victim(e.message) for e in s.events if e.rule in ("P1.preempt", "P1.skip_self")}
            self.readmissions += sum(e.rule == "P2" and e.seq_id in victims for e in s.events)
            labels = [e.rule for e in s.events]
            self.filled_by_admission += "P2.full" in labels and "P2" in labels[:labels.index("P2.full")]
            self.held_by_policy += "P2.policy" in labels
            self.held_whole += "P2.whole" in labels


def _victim(message: str) -> str:
    """The victim named in a P1.preempt / P1.skip_self message ("... preempt r2 = running[-1] ...")."""
    return message.split(": preempt ", 1)[1].split(" ", 1)[0]


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

    def __str__(self) -> str:
        return (f"workload {self.workload.config} {self.workload.requests} eos {self.workload.sample.eos_at}: "
                f"step {self.step}, {self.field}: encoding {self.encoding!r}, spec {self.spec!r}")


class Validator:
    """One unrolled run, evaluated on each workload's inputs (``evaluate.Compiled``), or solved (``solver=True``)."""

    def __init__(self, bounds: Bounds = STREAM, rules: types.ModuleType = spec.rules,
                 fault: str | None = None) -> None:
        """`fault`: build the encoding with this fault (transition.ENCODED_FAULTS); `rules` should carry it too."""
        self.b, self.rules = bounds, rules
        self.x = Inputs.fresh(bounds)
        self.run = Run(bounds, self.x, fault=fault)
        terms: list[z3.ExprRef] = [u for us in self.run.unwind for u in us]
        terms += [e for row in self.x.eos for e in row]
        for snap in self.run.mid[1:] + self.run.post[1:]:
            for f in snap.__slots__:
                v = getattr(snap, f)
                terms += list(v) if isinstance(v, tuple) else [v]
        self.evaluate = Compiled(self.run.defs, terms)

    def model(self, w: Workload, solver: bool = False) -> Values | z3.ModelRef | None:
        """The encoding's values on the workload's inputs; None if the pinned encoding has no run."""
        pins = pin(self.x, w, self.b)
        if not solver:
            return Values(self.evaluate(assignment(pins)))
        s = z3.Solver()
        s.add(self.run.defs + pins)
        return s.model() if s.check() == z3.sat else None

    def compare(self, w: Workload, solver: bool = False) -> Mismatch | None:
        """The first field in which the encoding's trace differs from the spec's, or None."""
        b, x = self.b, self.x
        slot = {r.seq_id: f"r{j}" for j, r in enumerate(w.requests)}
        try:
            steps = run(self.rules, w, b.steps)
        except Exception as e:  # e.g. add() refused a request the stream drew as feasible
            return Mismatch(w, 0, "spec.rules ran", "a run", f"{type(e).__name__}: {e}")
        m = self.model(w, solver)
        if m is None:
            return Mismatch(w, 0, "satisfiable", "unsat", "a run")
        for u in (u for us in self.run.unwind for u in us):
            if z3.is_true(m.eval(u, model_completion=True)):
                return Mismatch(w, 0, "unwind", "one more loop round needed", "none")
        for k in range(1, b.steps + 1):
            s = steps[k - 1] if k <= len(steps) else None
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
            want: tuple[object, ...]
            if s is None:  # the spec drained: the encoding must stand still
                want_mid = want_post = snapshot(steps[-1].after_update if steps else self.rules.initial_state(
                    w.config), b.slots, slot)
                want = (want_mid, [], want_post, [], [])
            else:
                want = (snapshot(s.after_schedule, b.slots, slot), [[slot[i], n] for i, n in s.batch],
                        snapshot(s.after_update, b.slots, slot), [[slot[i], tok] for i, tok in s.tokens],
                        [slot[i] for i in s.finished])
            got = (mid, [list(p) for p in pairs], post, [[i, tok] for _, i, tok in got_tokens],
                   [i for _, i in finished])
            for name, g, expected in zip(("after schedule()", "batch", "after update()", "tokens drawn", "finished"),
                                         got, want, strict=True):
                if g != expected:
                    return Mismatch(w, k, *_where(name, g, expected))
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
             rules: types.ModuleType = spec.rules, stop: int = 1,
             fault: str | None = None) -> tuple[list[Mismatch], Stats]:
    """Compare the encoding (with `fault`, if given) with `rules` on the `skip`-th to (skip + count)-th
    workloads of the seed's stream."""
    v = Validator(bounds, rules, fault)
    stats = Stats()
    bad: list[Mismatch] = []
    for i, w in enumerate(stream(seed, skip + count, bounds)):
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


__all__ = ["Mismatch", "Stats", "Validator", "stream", "validate", "val"]
