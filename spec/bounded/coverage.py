"""The smallest workload exercising each rule id, found by the solver and confirmed by the Python model.

For every target the encoding gives a cheap condition the event needs at some step
(for P1.skip_self, P2.stop and the finish reasons it is only necessary). The search
grows the scope, requests N = 1, 2, 3 then steps K = 1, 2, ..., and in the first
scope with a model it lowers the sum of prompt_len + max_tokens until the solver
runs out. Every model is run through spec.trace.run_workload; a model the spec run
does not confirm is blocked and the solver asked again, so each shipped case is a
fact about the spec, not about the encoding. Run ``python -m spec.bounded.coverage``
to regenerate conformance/workloads/data/coverage/ (deterministic: same z3, same files).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import z3

from spec.bounded.encode import FINISHED, RUNNING, WAITING, Bounds, Inputs, Term, one_if, total
from spec.bounded.transition import Run
from spec.bounded.witness import to_workload
from spec.trace import Step, Workload, run_workload, workload_to_json

OUT_DIR = Path(__file__).resolve().parents[2] / "conformance" / "workloads" / "data" / "coverage"
MAX_SLOTS, MAX_STEPS = 3, 4
Cond = Callable[[Run, int], z3.BoolRef]
Check = Callable[[Sequence[Step]], bool]


def _any(run: Run, f: Callable[[int], z3.BoolRef]) -> z3.BoolRef:
    return z3.Or(*[f(j) for j in range(run.b.slots)])


def _events(t: Sequence[Step], rule: str, reason: str | None = None) -> bool:
    return any(e.rule == rule and (reason is None or dict(e.data).get("reason") == reason)
               for s in t for e in s.events)


PREEMPT = ("P1.preempt", "P1.skip_self")  # a self-preemption is a preemption too


def _twice(t: Sequence[Step]) -> bool:
    return any(sum(e.rule in PREEMPT for e in s.events) >= 2 for s in t)


def _eos_early(t: Sequence[Step]) -> bool:
    """Finished by eos before max_tokens: an implementation ignoring eos fails it."""
    return any(e.rule == "U.finish" and dict(e.data).get("reason") == "eos"
               and any(q.seq_id == e.seq_id and len(q.output) < q.max_tokens for q in s.after_update.finished)
               for s in t for e in s.events)


def _readmitted(t: Sequence[Step]) -> bool:
    return any({e.seq_id for e in s.events if e.rule in PREEMPT} & {e.seq_id for e in s.events if e.rule == "P2"}
               for s in t)


@dataclass(frozen=True)
class Target:
    """A rule id (with a finish reason or a variant), the solver's condition at step k, the spec's check."""

    name: str  # the file name
    rule: str  # the rule id the case exercises
    cond: Cond
    check: Check


def _scheduled_running(r: Run, k: int) -> z3.BoolRef:
    return _any(r, lambda j: z3.And(r.pre[k].status[j] == RUNNING, r.mid[k].times[j] > 0))


def _finished(r: Run, k: int, j: int) -> z3.BoolRef:
    return z3.And(r.mid[k].status[j] == RUNNING, r.post[k].status[j] == FINISHED)


def _reason(r: Run, k: int, j: int, eos: bool) -> z3.BoolRef:
    """The finish reason: eos sampled before max_tokens is reached, or no eos at all."""
    hit = z3.Or(*[z3.And(r.mid[k].out[j] == t, e) for t, e in enumerate(r.x.eos[j])])
    return z3.And(hit, r.post[k].out[j] < r.x.max_tokens[j]) if eos else z3.Not(hit)


TARGETS: tuple[Target, ...] = (
    Target("P1", "P1", _scheduled_running, lambda t: _events(t, "P1")),
    Target("P1_preempt", "P1.preempt", lambda r, k: r.preempted_now[k - 1], lambda t: _events(t, "P1.preempt")),
    Target("P1_skip_self", "P1.skip_self", lambda r, k: r.preempted_now[k - 1], lambda t: _events(t, "P1.skip_self")),
    Target("P1_preempt_twice", "P1.preempt", lambda r, k: r.post[k].preemptions - r.pre[k].preemptions >= 2,
           _twice),
    Target("P1_skip_self_readmit", "P1.skip_self",
           lambda r, k: _any(r, lambda j: z3.And(r.pre[k].status[j] == RUNNING, r.pre[k].computed[j] > 0,
                                                 r.mid[k].status[j] == RUNNING, r.mid[k].computed[j] == 0)),
           _readmitted),
    Target("P2", "P2", lambda r, k: _any(r, lambda j: z3.And(r.pre[k].status[j] == WAITING,
                                                              r.mid[k].status[j] == RUNNING)),
           lambda t: _events(t, "P2")),
    Target("P2_stop", "P2.stop", lambda r, k: z3.And(r.mid[k].w > 0, r.mid[k].r < r.x.max_num_seqs),
           lambda t: _events(t, "P2.stop")),
    Target("P2_full", "P2.full", lambda r, k: z3.And(r.mid[k].w > 0, r.mid[k].r >= r.x.max_num_seqs),
           lambda t: _events(t, "P2.full")),
    Target("U_partial", "U.partial",
           lambda r, k: _any(r, lambda j: z3.And(r.mid[k].times[j] > 0, r.post[k].out[j] == r.mid[k].out[j])),
           lambda t: _events(t, "U.partial")),
    Target("U_sample", "U.sample", lambda r, k: _any(r, lambda j: r.post[k].out[j] > r.mid[k].out[j]),
           lambda t: _events(t, "U.sample")),
    Target("U_finish_eos", "U.finish",
           lambda r, k: _any(r, lambda j: z3.And(_finished(r, k, j), _reason(r, k, j, True))),
           _eos_early),
    Target("U_finish_max_tokens", "U.finish",
           lambda r, k: _any(r, lambda j: z3.And(_finished(r, k, j), _reason(r, k, j, False))),
           lambda t: _events(t, "U.finish", "max_tokens")),
)


BY_NAME = {t.name: t for t in TARGETS}


def _key(x: Inputs) -> list[Term]:
    """The order cases are ranked in: size first, then every input, so the least case is unique."""
    flags = [one_if(e) for row in x.eos for e in row]
    return [total([*x.prompt_len, *x.max_tokens]), x.num_blocks, x.block_size, x.max_num_seqs, x.budget,
            *x.prompt_len, *x.max_tokens, *x.arrival, *flags]


def _below(key: list[Term], values: list[Term]) -> z3.BoolRef:
    """key is lexicographically less than values."""
    out: z3.BoolRef = z3.BoolVal(False)
    for t, v in reversed(list(zip(key, values, strict=True))):
        out = z3.Or(t < v, z3.And(t == v, out))
    return out


def search_scope(target: Target, slots: int, steps: int) -> Workload | None:
    """The least confirmed workload (by `_key`) with exactly `slots` requests arriving by `steps`, or None."""
    b = Bounds(slots=slots, steps=steps)
    x = Inputs.fresh(b)
    run = Run(b, x)
    s = z3.Solver()
    s.add(run.defs + x.domain(b) + [a <= steps for a in x.arrival])
    s.add(z3.Or(*[target.cond(run, k) for k in range(1, steps + 1)]))
    key = _key(x)
    best: Workload | None = None
    while s.check() == z3.sat:
        m = s.model()
        values = [m.eval(t, model_completion=True) for t in key]
        w = to_workload(m, x, b, name=target.name, tags=("coverage", target.rule))
        if target.check(run_workload(w).steps[:steps]):
            best = w
            s.add(_below(key, values))
        else:  # not confirmed: rule out exactly these inputs
            s.add(z3.Not(z3.And(*[t == v for t, v in zip(key, values, strict=True)])))
    return best


def search(target: Target) -> Workload:
    """The least workload by (requests, steps, prompt_len + max_tokens) that the spec confirms."""
    for slots in range(1, MAX_SLOTS + 1):
        for steps in range(1, MAX_STEPS + 1):
            w = search_scope(target, slots, steps)
            if w is not None:
                return w
    raise LookupError(f"no workload within {MAX_SLOTS} requests and {MAX_STEPS} steps exercises {target.name}; "
                      "raise MAX_SLOTS or MAX_STEPS")


def steps_used(w: Workload, target: Target) -> int:
    """The first step by which the spec run has exercised the target."""
    steps = run_workload(w).steps
    for k in range(1, len(steps) + 1):
        if target.check(steps[:k]):
            return k
    raise AssertionError(f"{w.name}: the spec run does not exercise {target.rule}; regenerate the case")


def main(argv: list[str] | None = None) -> int:
    """Regenerate the coverage cases (all, or those named) into OUT_DIR (or a folder given first)."""
    args = list(argv or [])
    out = Path(args.pop(0)) if args and args[0] not in BY_NAME else OUT_DIR
    out.mkdir(parents=True, exist_ok=True)
    for target in [BY_NAME[a] for a in args] or TARGETS:
        w = search(target)
        (out / f"{target.name}.json").write_text(json.dumps(workload_to_json(w), indent=2, sort_keys=True) + "\n")
        size = sum(r.prompt_len + r.max_tokens for r in w.requests)
        print(f"{target.rule:12} {target.name:20} requests={len(w.requests)} steps={steps_used(w, target)} "
              f"size={size}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
