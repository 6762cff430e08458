"""Relational induction for OUT: a run with preemption and a run on an ample cache, stepped side by side.

Both runs read the same inputs except num_blocks (the ample one holds every
request's peak at once, so it never preempts) and the same sampler. The pair
invariant is Inv (``induction.inv``) of each run plus "the output is forced":
with e = the index of a sequence's first eos draw, an unfinished sequence has
drawn no eos yet and is below max_tokens (e >= out, out < max_tokens), and a
finished one ended on its first eos or at max_tokens (e >= out - 1, and
e == out - 1 or out == max_tokens). Queries, per block size: the empty pair
satisfies it; the pair invariant plus one step of each run (arrivals,
schedule(), update()) implies "the output is forced" again (that each run keeps
Inv is the single-run induction's claim Inv, for any num_blocks) and OUT: a sequence finished in both
runs has the same output (same length and draws; the output is the last
len(output) draws). Only the first eos matters (a sequence finishes on it), so
a sampler is, for these proofs, the first-eos index of each sequence.

The same queries over the encoding with ``preempt_clears_output`` (validated
against that fault of spec/faults.py) must find a counterexample: the
``fault_check`` of the row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import z3

from spec.bounded.encode import FINISHED, Bounds, Inputs, Snap, Term, arithmetic, num, total, var
from spec.bounded.induction import BLOCK_SIZES, _domain, blocks_for_peak, free_state, inv
from spec.bounded.transition import Run
from spec.model import DEFAULT_POLICY, Policy


def output_forced(run: Run, s: Snap, first_eos: tuple[Term, ...]) -> z3.BoolRef:
    """Each sequence's output is what its first eos and max_tokens force (the pair invariant's own part)."""
    out = []
    for j in range(run.b.slots):
        o, m, e = s.out[j], run.x.max_tokens[j], first_eos[j]
        out.append(z3.If(s.status[j] == FINISHED, z3.And(e >= o - 1, z3.Or(e == o - 1, o == m)),
                         z3.And(e >= o, o < m)))
    return z3.And(*out)


def same_outputs(t: Run, a: Run, st: Snap, sa: Snap) -> z3.BoolRef:
    """OUT: every sequence finished in both runs has the same output length and the same draws."""
    return z3.And(*[z3.Implies(z3.And(st.status[j] == FINISHED, sa.status[j] == FINISHED),
                               z3.And(st.out[j] == sa.out[j], st.drawn[j] == sa.drawn[j]))
                    for j in range(t.b.slots)])


@dataclass(frozen=True, slots=True)
class Pair:
    """The two one-step runs from free states, and the formulas of the queries."""

    domain: list[z3.BoolRef]  # without the block size
    x: Inputs
    hypothesis: z3.BoolRef
    goals: dict[str, z3.BoolRef]  # each true when the step breaks it


def pair(slots: int, fault: str | None, block_size: int = 4, policy: Policy = DEFAULT_POLICY) -> Pair:
    """Build one step of both runs from states satisfying the pair invariant (integer arithmetic)."""
    b = Bounds(slots=slots, steps=1, block_size=block_size, policy=policy)
    x = Inputs.fresh(b, "_r")
    xa = replace(x, num_blocks=var("num_blocks_ample_r"))
    e = tuple(var(f"first_eos{j}_r") for j in range(slots))
    k = var("k_r")
    st, sa = free_state(slots, "rt"), free_state(slots, "ra")
    t = Run(b, x, tag="rt", init=st, start=k, fault=fault, first_eos=e)
    a = Run(b, xa, tag="ra", init=sa, start=k, fault=fault, first_eos=e)
    peaks = total(blocks_for_peak(x, b, j) for j in range(slots))
    domain = [xa.num_blocks >= peaks, k >= 1] + [v >= 0 for v in e] + t.defs + a.defs
    hyp = z3.And(inv(t, st, k), inv(a, sa, k), output_forced(t, st, e), output_forced(a, sa, e))
    # Inv of each run after the step is the single-run induction's claim "Inv" (any num_blocks, so both runs)
    after = z3.And(output_forced(t, t.post[1], e), output_forced(a, a.post[1], e))
    goals = {"OUT": z3.Not(same_outputs(t, a, t.post[1], a.post[1])), "output forced": z3.Not(after)}
    return Pair(domain, x, hyp, goals)


def initial_holds(slots: int) -> bool:
    """The pair of empty states satisfies the pair invariant, whatever the inputs."""
    b = Bounds(slots=slots, steps=0)
    with arithmetic(0):
        x = Inputs.fresh(b, "_r0")
        e = tuple(var(f"first_eos{j}_r0") for j in range(slots))
        run = Run(b, x, first_eos=e)
        s = z3.Solver()
        s.add([v >= 0 for v in e] + [x.block_size >= 1] + _domain(x, b, 1)[1:])
        ok = z3.And(inv(run, run.post[0], num(1)), output_forced(run, run.post[0], e))
        return bool(s.check(z3.Not(ok)) == z3.unsat)


@dataclass(frozen=True, slots=True)
class Verdict:
    verdict: str  # "proved", "counterexample" or "unknown"
    seconds: float
    block_sizes_proved: tuple[int, ...]
    broken: str | None = None  # the goal with a counterexample (or no answer)


def prove_out(slots: int, block_sizes: tuple[int, ...] = BLOCK_SIZES, timeout: float = 600.0,
              fault: str | None = None, policy: Policy = DEFAULT_POLICY) -> Verdict:
    """Prove the pair invariant inductive and OUT implied by it, for each block size; stop at the first failure."""
    start = time.perf_counter()
    done: list[int] = []
    with arithmetic(0):
        p = pair(slots, fault, max(block_sizes), policy)
        b = Bounds(slots=slots, steps=1, block_size=max(block_sizes))
        for bs in block_sizes:
            for name, goal in p.goals.items():
                s = z3.Solver()
                s.set(timeout=max(1, int(timeout * 1000)))
                s.add(_domain(p.x, b, bs) + p.domain + [p.hypothesis])
                res = s.check(goal)
                if res != z3.unsat:
                    verdict = "counterexample" if res == z3.sat else "unknown"
                    return Verdict(verdict, round(time.perf_counter() - start, 2), tuple(done), name)
            done.append(bs)
    return Verdict("proved", round(time.perf_counter() - start, 2), tuple(done))
