"""Reach: a claim proved within a bound says something about a kind of step only if its antecedent can hold there.

A BMC claim whose formula is an implication holds of nothing where its antecedent fails. LIVE stated only as
"drained by the liveness bound" has the antecedent "that bound is at most K", and at K=3 no run that preempts
has so small a bound: it was proved and said nothing about preemption (it is now also stated per step, as a
ranking function, whose antecedent is any step with arrived work). So for each claim with an antecedent
(``PREMISES``, and OUT's: a sequence finished in both runs) and each kind of step (the validation's kinds,
``quotas.KINDS``, stated on the encoding), one query asks for a run within the bound with the antecedent at a
step of that kind; unsat makes the row fail. A kind no run within the bound has at all (several victims in
one step need three requests) is listed as beyond the bound: that says what the bound covers (the
validation's quotas and the model check cover it), not what a claim assumes. Reach only grows with the
bounds (a larger bound has every run of a smaller one, the extra requests arriving last), so the quick run's
answers hold for the full one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import z3

from spec.bounded import checks
from spec.bounded.encode import FINISHED, RUNNING, Bounds, Inputs, num, one_if, total, var
from spec.bounded.transition import Run
from spec.model import Policy

Cond = Callable[[Run, int], z3.BoolRef]  # at step k of a run


def _admitted(r: Run, k: int, j: int) -> z3.BoolRef:
    """Phase 2 of step k admitted slot j (it is in the batch and phase 1 did not keep it)."""
    kept = z3.And(r.pre[k].status[j] == RUNNING, r.mid[k].computed[j] > 0)
    return z3.And(r.mid[k].times[j] > 0, z3.Not(kept))


def _finished(r: Run, k: int, j: int) -> z3.BoolRef:
    return z3.And(r.mid[k].status[j] == RUNNING, r.post[k].status[j] == FINISHED)


def _on_eos(r: Run, k: int, j: int) -> z3.BoolRef:
    """The token slot j draws in step k is eos."""
    return z3.Or(*[z3.And(r.mid[k].drawn[j] == d, e) for d, e in enumerate(r.x.eos[j])])


def _any(r: Run, f: Callable[[int], z3.BoolRef]) -> z3.BoolRef:
    return z3.Or(*[f(j) for j in range(r.b.slots)])


def _max_then_eos(r: Run, k: int) -> z3.BoolRef:
    n, mid = r.b.slots, r.mid[k]
    return z3.Or(*[z3.And(_finished(r, k, x), z3.Not(_on_eos(r, k, x)), _finished(r, k, y), _on_eos(r, k, y),
                          mid.order[x] < mid.order[y]) for x in range(n) for y in range(n) if x != y])


# Each kind of quotas.KINDS as a condition on the encoding's step k (sufficient for the kind: "readmit" reads a
# sequence preempted before by the output it kept, or by its preemption in this step).
KINDS: dict[str, Cond] = {
    "preempt": lambda r, k: r.preempted_other[k - 1],
    "self": lambda r, k: r.preempted_self[k - 1],
    "victims": lambda r, k: r.mid[k].preemptions - r.pre[k].preemptions >= 2,
    "readmit": lambda r, k: _any(r, lambda j: z3.And(_admitted(r, k, j), z3.Or(
        r.pre[k].status[j] == RUNNING, r.pre[k].out[j] > 0))),
    "readmit_output": lambda r, k: _any(r, lambda j: z3.And(_admitted(r, k, j), r.pre[k].out[j] > 0)),
    "finish": lambda r, k: _any(r, lambda j: _finished(r, k, j)),
    "finishes": lambda r, k: total(one_if(_finished(r, k, j)) for j in range(r.b.slots)) >= 2,
    "max_then_eos": _max_then_eos,
    "arrive_behind": lambda r, k: z3.And(r.post[k - 1].w > 0, z3.Or(*[a == k for a in r.x.arrival])),
    "admit_after_3": lambda r, k: z3.And(r.pre[k].preemptions >= 3, _any(r, lambda j: _admitted(r, k, j))),
    "whole": lambda r, k: r.held_whole[k - 1],
    "held": lambda r, k: z3.And(r.preempted_now[k - 1], r.mid[k].w > 0),
}
POLICY_ONLY: dict[str, Callable[[Policy], bool]] = {"whole": lambda p: p.reserve_full_isl,  # the policies with it
                                                   "held": lambda p: p.holds_after_preemption}

# The antecedent of each claim whose formula has one (checks.broken_at), at step k: where it fails the claim holds
# vacuously. The other claims' formulas judge every step as it is. OUT's (a sequence finished in both runs, at
# step k or later) is about its product run, and the kind is asked of the tight run (``Queries.premise``).
PREMISES: dict[str, Cond] = {
    "LIVE": lambda r, k: r.pre[k].r + r.pre[k].w > 0,  # the ranking function's: arrived, unfinished work
    "CH": lambda r, k: r.mid[k].r > 0,  # a sequence runs
    "AD": lambda r, k: r.mid[k].w > 0,  # a sequence waits after schedule()
}


def kinds_for(policy: Policy) -> tuple[str, ...]:
    return tuple(k for k in KINDS if k not in POLICY_ONLY or POLICY_ONLY[k](policy))


def _solve(facts: list[z3.BoolRef], goal: z3.BoolRef, timeout: float) -> str:
    s = z3.Solver()
    s.set(timeout=max(1, int(timeout * 1000)))
    s.add(facts)
    res = s.check(goal)
    return "sat" if res == z3.sat else "unsat" if res == z3.unsat else "unknown"


class Queries:
    """The run within one bound, and the reach queries on it (OUT's product run built when first asked)."""

    def __init__(self, bounds: Bounds, timeout: float) -> None:
        self.b, self.timeout = bounds, timeout
        self.x = Inputs.fresh(bounds)
        self.run = Run(bounds, self.x)
        self.facts = self.x.domain(bounds) + self.run.defs
        self.steps = range(1, bounds.steps + 1)
        self.product: list[z3.BoolRef] = []
        self.later: list[z3.BoolRef] = []  # OUT's premise: a sequence finished in both runs at step k or later

    def anywhere(self, kind: str) -> str:
        """Whether some run within the bound has a step of `kind`."""
        return _solve(self.facts, z3.Or(*[KINDS[kind](self.run, k) for k in self.steps]), self.timeout)

    def ends_missed(self) -> list[str]:
        """Each input at either end of the range the bounds state (1 and the bound) that no run within them takes:
        a domain narrower than the bounds proves less than the rows that print them say (a block_size never 4
        under block_size<=4)."""
        x, b = self.x, self.b
        ranges = [("num_blocks", x.num_blocks, b.num_blocks), ("block_size", x.block_size, b.block_size),
                  ("max_num_seqs", x.max_num_seqs, b.max_num_seqs), ("budget", x.budget, b.budget)]
        for s in range(b.slots):
            ranges += [(f"prompt_len[{s}]", x.prompt_len[s], b.prompt_len),
                       (f"max_tokens[{s}]", x.max_tokens[s], b.max_tokens),
                       (f"arrival[{s}]", x.arrival[s], b.last_arrival)]
        return [f"{name} = {end}" for name, v, hi in ranges for end in sorted({1, hi})
                if _solve(self.facts, v == end, self.timeout) != "sat"]

    def premise(self, claim: str) -> Cond:
        if claim != "OUT":
            return PREMISES[claim]
        if not self.later:
            ample, self.product = _ample(self.b, self.x, self.run)
            both = [_both_finished(self.run, ample, k) for k in self.steps]
            self.later = [z3.Or(*both[k - 1:]) for k in self.steps]
        return lambda r, k: self.later[k - 1]

    def with_kind(self, claim: str, kind: str) -> str:
        """Whether some run within the bound has the claim's premise at a step of `kind`."""
        premise = self.premise(claim)
        goal = z3.Or(*[z3.And(premise(self.run, k), KINDS[kind](self.run, k)) for k in self.steps])
        return _solve(self.facts + (self.product if claim == "OUT" else []), goal, self.timeout)


def reach(bounds: Bounds, claims: tuple[str, ...], timeout: float = 120.0, ends: bool = True) -> dict[str, object]:
    """The reach row: for each claim with an antecedent (PREMISES, OUT) and each kind some run within `bounds`
    has, whether a run has the antecedent at a step of that kind; "unsat" makes the claim vacuous there and
    the row fail. The kinds no run within the bound has are listed as beyond it. Every input must also take
    both ends of its stated range (Queries.ends_missed, unless `ends` is False: the row of a claim that needs
    more requests than the others, whose ranges the first row checks), or the row is "narrow" and fails."""
    start = time.perf_counter()
    q = Queries(bounds, timeout)
    kinds = kinds_for(bounds.policy)
    anywhere = {kind: q.anywhere(kind) for kind in kinds}
    found = {claim: {kind: q.with_kind(claim, kind) for kind in kinds if anywhere[kind] == "sat"}
             for claim in claims if claim in PREMISES or claim == "OUT"}
    vacuous = [f"{claim} with {kind}: {v}" for claim, row in found.items() for kind, v in row.items() if v != "sat"]
    missed = q.ends_missed() if ends else []
    return {"claim": "premises reach every kind", "kind": "reach",
            "bounds": bounds.to_json(), "claims": list(claims),
            "anywhere": anywhere, "premises": found, "vacuous": vacuous,
            "beyond": [k for k, v in anywhere.items() if v != "sat"], "ends_missed": missed,
            "verdict": "vacuous" if vacuous else "narrow" if missed else "reached",
            "seconds": round(time.perf_counter() - start, 2)}


def _both_finished(run: Run, ample: Run, k: int) -> z3.BoolRef:
    return _any(run, lambda j: z3.And(run.post[k].status[j] == FINISHED, ample.post[k].status[j] == FINISHED))


def _ample(bounds: Bounds, x: Inputs, run: Run) -> tuple[Run, list[z3.BoolRef]]:
    """OUT's second run, as checks.check builds it: the same inputs on a cache that holds every peak at once."""
    xa = replace(x, num_blocks=var("num_blocks_ample"))
    ample = Run(bounds, xa, tag="a")
    peaks = total(run.bf(x.prompt_len[j] + x.max_tokens[j] - 1) for j in range(bounds.slots))
    return ample, ample.defs + [xa.num_blocks >= peaks, xa.num_blocks <= peaks + num(bounds.num_blocks)]


CLAIMS = tuple(c.name for c in checks.CLAIMS)
