"""One function per claim: build the unrolled run, ask z3 for a violation, return a verdict.

Verdicts follow the three-way style: ``proved`` (unsat: no input within the
bounds breaks the claim), ``counterexample`` (sat: the shortest one by steps,
as a workload in the trace format), ``unknown`` (the solver timed out).

A check is lemma-free by default: the query for step k assumes only that the
claim held at steps 1..k-1 (which the earlier queries proved). With
``lemmas=True`` it also assumes the induction invariant Inv before step k; such
a row rests on the induction proof and is marked so in the results.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

import z3

from spec.bounded import claims as c
from spec.bounded.encode import FINISHED, Bounds, Inputs, num, var
from spec.bounded.encode import total as add_up
from spec.bounded.induction import inv
from spec.bounded.transition import Run
from spec.bounded.witness import to_workload
from spec.trace import workload_to_json


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim: its id, what it says in plain words, and its per-step violation formula."""

    name: str
    text: str
    product: bool = False  # needs a second run with ample num_blocks
    slots: int = 2  # the fewest requests at which its antecedent meets every kind of step (reach.py): its least N


@dataclass(frozen=True, slots=True)
class Result:
    claim: str
    bounds: dict[str, object]
    verdict: str  # "proved", "counterexample" or "unknown"
    seconds: float
    step: int | None = None  # the counterexample's last step (shortest); for unknown, the open step
    workload: dict[str, object] | None = None  # the counterexample, in the trace format
    lemmas: bool = False  # each step's query assumed Inv (proved by induction) at the state before it
    steps_proved: int | None = None  # for unknown: the steps 1..steps_proved were proved
    timeout: float | None = None  # seconds allowed to each step's query
    step_seconds: tuple[float, ...] | None = None  # the time of each step's query, in order

    def to_json(self) -> dict[str, object]:
        return {k: v for k, v in asdict(self).items() if v is not None}


CLAIMS: tuple[Claim, ...] = (
    Claim("unwind", "the unrolled loops cover every run: one more round of phase 1, its preemption retry "
                    "or phase 2 would never change anything"),
    Claim("I1", "blocks_used == sum of running num_blocks <= num_blocks; each running sequence holds exactly "
                "blocks_for(num_computed + scheduled n); nobody else holds blocks"),
    Claim("I2", "each batch spends <= max_num_batched_tokens, every n >= 1, each sequence once, only waiting or "
                "running sequences"),
    Claim("I3", "0 <= num_computed <= num_tokens, waiting sequences have computed nothing, and a token is sampled "
                "exactly when num_computed reaches num_tokens"),
    Claim("I4", "output is never shortened; a preempted sequence has num_computed == num_blocks == 0"),
    Claim("I5", "waiting after schedule() is: the preempted (in running order), then the old waiting queue, "
                "minus the admitted prefix; update() leaves it unchanged"),
    Claim("I6", "every sequence is in exactly one queue with the matching status; len(running) <= max_num_seqs"),
    Claim("OUT", "a run with tight num_blocks and one with ample num_blocks (no preemption possible) give every "
                 "sequence finished in both the same output, and both drain when the liveness bound is <= K",
          product=True),
    Claim("LIVE", "every workload drains within (last arrival - 1) + sum(prompt_len + max_tokens - 1) steps; per "
                  "step: Phi (unfinished work minus running[0]'s computed tokens) is >= 0, never grows, and drops by "
                  ">= 1 in every step with arrived, unfinished work"),
    Claim("FA", "fact (a): phase 1 never stops on the budget: every running sequence is scheduled or preempted"),
    Claim("FB", "fact (b): len(running) <= max_num_batched_tokens after every schedule() and update()"),
    Claim("FC", "fact (c): between steps, every running sequence except running[-1] has exactly one token to "
                "compute (only the most recently admitted can be in the middle of a prefill)"),
    Claim("FD", "fact (d): when a running sequence other than running[-1] fails to grow, one victim suffices"),
    Claim("NP", "num_preemptions grows in schedule() by the number of sequences it preempted (left waiting or "
                "admitted again), and update() leaves it unchanged"),
    Claim("BO", "the batch lists the running sequences phase 1 kept, in running order, then the admitted ones in "
                "the order of waiting after phase 1"),
    Claim("FR", "update() finishes exactly the sequences it samples whose output reaches max_tokens or whose new "
                "token is eos"),
    Claim("CH", "each sequence schedule() runs gets n = min(tokens left to compute, budget left), the budget spent "
                "in the order of running after it"),
    Claim("AD", "phase 2 stops admitting only at a gate: after schedule(), waiting is empty or its head is held by "
                "the budget, max_num_seqs or the free blocks for its chunk (vllm-v1: also for its whole sequence, or "
                "a preemption in the step)", slots=3),  # a sequence left waiting beside a readmitted one, or two
)                                                          # that finish, needs three requests


def at_least(bounds: Bounds, name: str) -> Bounds:
    """`bounds` with at least as many request slots as claim `name` needs to say something of every kind."""
    return replace(bounds, slots=max(bounds.slots, BY_NAME[name].slots))
BY_NAME = {claim.name: claim for claim in CLAIMS}


def broken_at(name: str, run: Run, ample: Run | None) -> Callable[[int], z3.BoolRef]:
    """The formula 'claim `name` is broken at step k'."""
    def bad(k: int) -> z3.BoolRef:
        if name == "unwind":
            return z3.Or(*run.unwind[k - 1])
        if name.startswith("I"):
            return c.bad_invariant(name, run, k)
        if name == "OUT":
            assert ample is not None
            t, a = run.post[k], ample.post[k]
            # the output is the last `out` tokens drawn: equal outputs have equal `out` and `drawn`
            differ = [z3.And(t.status[j] == FINISHED, a.status[j] == FINISHED,
                             z3.Or(t.out[j] != a.out[j], t.drawn[j] != a.drawn[j])) for j in range(run.b.slots)]
            drained = z3.And(c.all_finished(run, t), c.all_finished(ample, a))
            return z3.Or(*differ, z3.And(k == run.b.steps, c.liveness_bound(run) <= k, z3.Not(drained)))
        if name == "LIVE":  # drained by the bound, and the ranking function at every step (which implies it)
            return z3.Or(z3.And(c.liveness_bound(run) == k, z3.Not(c.all_finished(run, run.post[k]))),
                         c.bad_ranking(run, run.post[k - 1], run.pre[k], run.post[k]))
        if name == "FA":
            return run.budget_out[k - 1]
        if name == "FB":
            return z3.Or(run.mid[k].r > run.x.budget, run.post[k].r > run.x.budget)
        if name == "FC":
            return z3.Not(c.decoding_except_last(run, run.post[k]))
        if name == "FD":
            return run.multi_victim[k - 1]
        if name == "NP":
            return c.bad_preemptions(run, k)
        if name == "BO":
            return c.bad_batch_order(run, k)
        if name == "FR":
            return c.bad_finish(run, k)
        if name == "CH":
            return c.bad_chunks(run, k)
        if name == "AD":
            return c.bad_admission(run, k)
        raise ValueError(f"unknown claim {name!r}; known: {', '.join(BY_NAME)}")
    return bad


def _solve(base: list[z3.BoolRef], goal: z3.BoolRef, timeout: float) -> tuple[z3.CheckSatResult, z3.ModelRef | None]:
    s = z3.Solver()
    s.set(timeout=max(1, int(timeout * 1000)))
    s.add(base)
    s.add(goal)
    res = s.check()
    return res, (s.model() if res == z3.sat else None)


def check(name: str, bounds: Bounds, timeout: float = 600.0, lemmas: bool = False,
          total: float | None = None) -> Result:
    """Check one claim within `bounds`, step by step (lemma-free unless `lemmas`).

    Each step's query gets `timeout` seconds, and at most what is left of `total` (all steps together);
    when a query has no answer in time the result is unknown and says which steps were proved."""
    claim = BY_NAME.get(name)
    if claim is None:
        raise ValueError(f"unknown claim {name!r}; known: {', '.join(BY_NAME)}")
    start = time.perf_counter()
    x = Inputs.fresh(bounds)
    run = Run(bounds, x)
    base = x.domain(bounds) + run.defs
    ample = None
    if claim.product:
        xa = replace(x, num_blocks=var("num_blocks_ample"))
        ample = Run(bounds, xa, tag="a")
        peaks = add_up(run.bf(x.prompt_len[j] + x.max_tokens[j] - 1) for j in range(bounds.slots))
        base += ample.defs + [xa.num_blocks >= peaks, xa.num_blocks <= peaks + bounds.num_blocks]
    bad = broken_at(name, run, ample)
    info = bounds.to_json() | {"arrival": bounds.last_arrival}
    inputs = base[:len(base) - len(run.defs) - (len(ample.defs) + 2 if ample else 0)]
    extra = [xa.num_blocks >= peaks, xa.num_blocks <= peaks + bounds.num_blocks] if ample else []
    held: list[z3.BoolRef] = []
    times: list[float] = []
    for k in range(1, bounds.steps + 1):
        # the first violation at step k: the claim held at every earlier step (assumed, which helps the solver)
        defs = run.defs[:run.marks[k]] + (ample.defs[:ample.marks[k]] if ample else [])
        if lemmas:  # Inv before step k, proved inductive in induction.py
            defs += [inv(r, r.post[k - 1], num(k)) for r in (run, ample) if r is not None]
        b = bad(k)
        t = time.perf_counter()
        left = timeout if total is None else min(timeout, total - (t - start))
        res, model = _solve(inputs + extra + defs + held, b, left) if left > 0 else (z3.unknown, None)
        times.append(round(time.perf_counter() - t, 2))
        if res == z3.unknown:
            return Result(name, info, "unknown", round(time.perf_counter() - start, 2), k, lemmas=lemmas,
                          steps_proved=k - 1, timeout=timeout, step_seconds=tuple(times))
        if res == z3.sat:
            assert model is not None
            w = to_workload(model, x, bounds, name=f"{name}-counterexample", tags=("counterexample", name))
            return Result(name, info, "counterexample", round(time.perf_counter() - start, 2), k,
                          workload_to_json(w), lemmas, timeout=timeout, step_seconds=tuple(times))
        held.append(z3.Not(b))
    return Result(name, info, "proved", round(time.perf_counter() - start, 2), lemmas=lemmas, timeout=timeout,
                  step_seconds=tuple(times))
