"""Shrink a failing workload to the fewest requests and steps that still fail the same check.

Deterministic greedy descent over the workload as data: drop a request, move an
arrival earlier, shorten a prompt or an output, drop an eos position, lower a
config number. A candidate is kept when the same check still fails and the
(requests, divergence step, tokens, config) key got smaller. Hypothesis shrinks
choice sequences and depends on its version; this works on the data, so the same
failure always shrinks to the same counterexample.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from conformance.checks.checkers import Finding, expected_trace
from conformance.drivers import STEP_CAP, runnable, step_cap
from conformance.limits import HangLimit
from spec.errors import SpecError
from spec.feasible import feasible, liveness_bound
from spec.model import Config
from spec.trace import Request, Workload, make_workload

Predicate = Callable[[Workload], Finding | None]


def size_key(w: Workload, f: Finding) -> tuple[int, ...]:
    """Smaller is simpler: requests, then the step of the divergence, then tokens and config numbers."""
    c = w.config
    return (len(w.requests), f.step, sum(r.prompt_len + r.max_tokens for r in w.requests),
            sum(r.arrival for r in w.requests), sum(len(v) for _, v in w.sample.eos_at), c.num_blocks,
            c.block_size, c.max_num_seqs, c.max_num_batched_tokens, 0 if c.eos is None else 1)


def rebuild(w: Workload, config: Config | None = None, requests: tuple[Request, ...] | None = None,
            eos_at: dict[str, tuple[int, ...]] | None = None, rename: bool = False) -> Workload | None:
    """The workload with some parts replaced, or None when that is not a feasible workload."""
    config = config or w.config
    reqs = requests if requests is not None else w.requests
    eos = dict(w.sample.eos_at) if eos_at is None else eos_at
    ids = {r.seq_id for r in reqs}
    eos = {k: v for k, v in eos.items() if k in ids and v}
    base = {k: b for k, b in w.sample.base if k in ids}
    if rename:
        names = {r.seq_id: f"a{i + 1}" for i, r in enumerate(reqs)}
        reqs = tuple(Request(names[r.seq_id], r.prompt_len, r.max_tokens, r.arrival) for r in reqs)
        eos = {names[k]: v for k, v in eos.items()}
        base = {}
    if not reqs:
        return None
    shift = min(r.arrival for r in reqs) - 1  # the first arrival is always step 1
    reqs = tuple(Request(r.seq_id, r.prompt_len, r.max_tokens, r.arrival - shift) for r in reqs)
    if not feasible(config, reqs):
        return None
    if any(max(v) >= r.max_tokens for r in reqs for k, v in eos.items() if k == r.seq_id):
        eos = {k: tuple(p for p in v if p < next(r.max_tokens for r in reqs if r.seq_id == k)) for k, v in eos.items()}
        eos = {k: v for k, v in eos.items() if v}
    if config.eos is None and eos:
        return None
    try:
        return make_workload(config, reqs, base, eos, w.name, w.tags)
    except SpecError:
        return None


def _config(c: Config, **changes: int | None) -> Config | None:
    """`c` with some fields changed and the rest (the policy among them) kept; None when that is not a config."""
    try:
        return replace(c, **changes)  # type: ignore[arg-type]
    except SpecError:
        return None


def _smaller(x: int, floor: int) -> list[int]:
    return sorted({v for v in (floor, x // 2, x - 1) if floor <= v < x})


def candidates(w: Workload) -> Iterator[Workload | None]:
    """Every one-edit simplification of `w`, simplest edits first."""
    reqs = w.requests
    for i in range(len(reqs)):
        yield rebuild(w, requests=reqs[:i] + reqs[i + 1:])
    for i, r in enumerate(reqs):
        for field in ("arrival", "prompt_len", "max_tokens"):
            for v in _smaller(getattr(r, field), 1):
                changed = Request(r.seq_id, **{**{"prompt_len": r.prompt_len, "max_tokens": r.max_tokens,
                                                  "arrival": r.arrival}, field: v})
                yield rebuild(w, requests=reqs[:i] + (changed,) + reqs[i + 1:])
    eos_at = dict(w.sample.eos_at)
    for k, positions in sorted(eos_at.items()):
        for p in positions:
            yield rebuild(w, eos_at={**eos_at, k: tuple(x for x in positions if x != p)})
    c = w.config
    if c.eos is not None and not eos_at:
        yield rebuild(w, config=_config(c, eos=None))
    for field in ("num_blocks", "block_size", "max_num_seqs", "max_num_batched_tokens"):
        for v in _smaller(getattr(c, field), 1):
            config = _config(c, **{field: v})
            if config is not None:
                yield rebuild(w, config=config)


SHRINK_WORK = 200_000  # steps x (requests + 4) of the spec's runs of the candidates tried, at most, per shrink


UNFINISHED = ("H.timeout", "L.progress", "L.bound")  # findings of a run that goes on to its step cap


def work(w: Workload, finding: Finding) -> int:
    """What checking a candidate costs, in steps times (requests + 4): deterministic, unlike seconds.

    White-box checking reads every sequence after every call, so a crowd's long run costs
    thousands of times a small workload's; a budget in these units lets small counterexamples
    shrink fully and stops a crowd's after a few seconds, with the smallest found by then.
    The steps are the spec's, or the run's step cap when the finding is a run that never ends.
    """
    if not runnable(w):
        return STEP_CAP * (len(w.requests) + 4)
    steps = len(expected_trace(w).steps)
    if finding.rule in UNFINISHED:
        steps = max(steps, step_cap(w, liveness_bound(w.requests)))
    return steps * (len(w.requests) + 4)


def shrink(w: Workload, finding: Finding, fails: Predicate, max_rounds: int = 200,
           budget: int = SHRINK_WORK) -> tuple[Workload, Finding]:
    """Greedily simplify `w` while `fails` still reports a finding; return the smallest and its finding.

    The search stops when the candidates tried have cost `budget` (see work), and when a
    submission that hangs has spent the run's hang allowance (HangLimit): the smallest
    workload found by then is the answer.
    """
    best, best_f = w, finding
    spent = 0
    try:
        for _ in range(max_rounds):
            for cand in candidates(best):
                if cand is None:
                    continue
                spent += work(cand, finding)
                if spent > budget:
                    return best, best_f
                f = fails(cand)
                if f is not None and size_key(cand, f) < size_key(best, best_f):
                    best, best_f = cand, f
                    break
            else:
                break
        renamed = rebuild(best, rename=True)
        if renamed is not None:
            f = fails(renamed)
            if f is not None:
                best, best_f = renamed, f
    except HangLimit:
        pass
    return best, best_f
