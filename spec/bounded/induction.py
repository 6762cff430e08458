"""Induction: the invariants, strengthened, hold for runs of any length at N slots.

Inv is I1, I3 and I6 of a state between steps plus the facts that make them
inductive (queues in arrival order, running sequences caught up except the
last, len(running) <= budget, ...). Two queries per block size: the empty state
satisfies Inv, and Inv plus one arrival/schedule()/update() step implies Inv
again and every step claim (I1..I6, facts a..d, the unrolling bound). Every
integer is unbounded except block_size, which is swept (divisions by a constant
stay linear). Liveness gets a ranking function: Phi = sum over unfinished
requests of (prompt_len + max_tokens - 1) - num_computed of running[0] never
grows and drops by >= 1 in every step with arrived, unfinished work.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import z3

from spec.bounded import claims as c
from spec.bounded.encode import (
    FINISHED,
    RUNNING,
    UNARRIVED,
    WAITING,
    Bounds,
    Inputs,
    Snap,
    Term,
    arithmetic,
    num,
    total,
    var,
)
from spec.bounded.transition import Run
from spec.model import DEFAULT_POLICY, Policy

STEP_CLAIMS = ("unwind", "I1", "I2", "I3", "I4", "I5", "I6", "FA", "FB", "FC", "FD", "NP", "BO", "FR", "CH", "AD",
               "Inv", "LIVE")


def free_state(n: int, tag: str) -> Snap:
    def vs(label: str) -> tuple[Term, ...]:
        return tuple(var(f"{label}{j}_{tag}") for j in range(n))
    return Snap(vs("st"), vs("nc"), vs("nb"), vs("out"), vs("dr"), vs("sc"), vs("tm"), vs("od"), vs("q"),
                var(f"r_{tag}"), var(f"w_{tag}"), var(f"used_{tag}"), var(f"pre_{tag}"), var(f"size_{tag}"))


def inv(run: Run, s: Snap, k: Term) -> z3.BoolRef:
    """The strengthened invariant of a state between steps; `k` is the next step's number."""
    n, x = run.b.slots, run.x
    out = [s.size == 0, s.r >= 0, s.w >= 0, s.r + s.w <= n, s.r <= x.max_num_seqs, s.r <= x.budget,
           s.preemptions >= 0, s.used == total(z3.If(s.status[j] == RUNNING, s.blocks[j], num(0)) for j in range(n)),
           s.used <= x.num_blocks]
    for j in range(n):
        st, nc, nb, o, p, m = s.status[j], s.computed[j], s.blocks[j], s.out[j], x.prompt_len[j], x.max_tokens[j]
        out += [s.sched[j] == 0, s.times[j] == 0, s.order[j] == 0, s.drawn[j] == o,
                z3.Or(st == UNARRIVED, st == WAITING, st == RUNNING, st == FINISHED),
                (st == UNARRIVED) == (x.arrival[j] >= k),
                z3.Implies(st == UNARRIVED, z3.And(nc == 0, nb == 0, o == 0)),
                z3.Implies(st == WAITING, z3.And(nc == 0, nb == 0, o >= 0, o < m)),
                z3.Implies(st == RUNNING, z3.And(nc >= 1, nc <= p + o - 1, nb == run.bf(nc), o >= 0, o < m)),
                z3.Implies(st == FINISHED, z3.And(nb == 0, o >= 1, o <= m, nc == p + o - 1))]
    for t in range(n):
        q = s.queue[t]
        active = t < s.r + s.w
        out.append(z3.If(active, z3.And(q >= 0, q < n), q == n))
        if t + 1 < n:
            out.append(z3.Implies(t + 1 < s.r + s.w, q < s.queue[t + 1]))  # arrival order
        for j in range(n):
            st = s.status[j]
            out.append(z3.Implies(z3.And(active, q == j), z3.If(t < s.r, st == RUNNING, st == WAITING)))
            # fact (c): every running sequence but running[-1] is decoding
            out.append(z3.Implies(z3.And(t < s.r - 1, q == j), s.computed[j] == x.prompt_len[j] + s.out[j] - 1))
    count = total(z3.If(z3.Or(s.status[j] == RUNNING, s.status[j] == WAITING), num(1), num(0)) for j in range(n))
    out.append(count == s.r + s.w)
    return z3.And(*out)


@dataclass(frozen=True, slots=True)
class Outcome:
    claim: str
    slots: int
    verdict: str  # "proved", "counterexample" or "unknown"
    seconds: float
    block_sizes: tuple[int, ...]
    block_sizes_proved: tuple[int, ...] = ()  # those proved before the first that was not (all when proved)


def _domain(x: Inputs, b: Bounds, bs: int) -> list[z3.BoolRef]:
    out = [x.block_size == bs, x.num_blocks >= 1, x.max_num_seqs >= 1, x.budget >= 1]
    for j in range(b.slots):
        out += [x.prompt_len[j] >= 1, x.max_tokens[j] >= 1, x.arrival[j] >= 1,
                blocks_for_peak(x, b, j) <= x.num_blocks]
        if j:
            out.append(x.arrival[j - 1] <= x.arrival[j])
    return out


def blocks_for_peak(x: Inputs, b: Bounds, j: int) -> Term:
    from spec.bounded.encode import blocks_for
    return blocks_for(x.block_size, x.prompt_len[j] + x.max_tokens[j] - 1, b)


BLOCK_SIZES = tuple(range(1, Bounds().block_size + 1))  # every block size the bounds state, one query each


def prove(slots: int, block_sizes: tuple[int, ...] = BLOCK_SIZES, timeout: float = 600.0,
          only: tuple[str, ...] = STEP_CLAIMS, policy: Policy = DEFAULT_POLICY) -> list[Outcome]:
    """Prove each step claim inductive at `slots` slots, for every block size in `block_sizes`, under `policy`."""
    b = Bounds(slots=slots, steps=1, block_size=max(block_sizes), policy=policy)
    results = []
    with arithmetic(0):
        x = Inputs.fresh(b, "_i")
        x = replace(x, eos=tuple((z3.Bool(f"eos_now{j}"),) for j in range(slots)))
        k = var("k")
        s0 = free_state(slots, "s")
        run = Run(b, x, tag="i", init=s0, start=k)
        pre, mid, post = run.pre[1], run.mid[1], run.post[1]
        goals = {
            "unwind": z3.Or(*run.unwind[0]), "FA": run.budget_out[0], "FD": run.multi_victim[0],
            "FB": z3.Or(mid.r > x.budget, post.r > x.budget), "FC": z3.Not(c.decoding_except_last(run, post)),
            "Inv": z3.Not(inv(run, post, k + 1)), "NP": c.bad_preemptions(run, 1), "BO": c.bad_batch_order(run, 1),
            "FR": c.bad_finish(run, 1), "CH": c.bad_chunks(run, 1), "AD": c.bad_admission(run, 1),
            "LIVE": c.bad_ranking(run, s0, pre, post),
        } | {name: c.bad_invariant(name, run, 1) for name in ("I1", "I2", "I3", "I4", "I5", "I6")}
        for name in only:
            start, verdict, done = time.perf_counter(), "proved", []
            for bs in block_sizes:
                s = z3.Solver()
                s.set(timeout=max(1, int(timeout * 1000)))
                s.add(_domain(x, b, bs) + run.defs + [k >= 1, inv(run, s0, k)])
                res = s.check(goals[name])
                if res != z3.unsat:
                    verdict = "counterexample" if res == z3.sat else "unknown"
                    break
                done.append(bs)
            results.append(Outcome(name, slots, verdict, round(time.perf_counter() - start, 2), block_sizes,
                                   tuple(done)))
    return results


def initial_holds(slots: int, block_size: int = 4) -> bool:
    """The empty state before step 1 satisfies Inv (for any inputs)."""
    b = Bounds(slots=slots, steps=0, block_size=block_size)
    with arithmetic(0):
        x = Inputs.fresh(b, "_0")
        run = Run(b, x)
        s = z3.Solver()
        s.add([x.block_size >= 1, x.block_size <= block_size] + _domain(x, b, 1)[1:])
        return bool(s.check(z3.Not(inv(run, run.post[0], num(1)))) == z3.unsat)
