"""Workload generators: Hypothesis strategies that draw feasible workloads as data.

Feasible means every request fits the cache alone (its peak need
blocks_for(prompt_len + max_tokens - 1) <= num_blocks), which docs/rules.md requires of
every conformance workload; the filter lives here and nowhere else.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import event
from hypothesis import strategies as st

from conformance.workloads import scale
from spec.feasible import ample_num_blocks as ample_num_blocks_for
from spec.feasible import tightest_num_blocks
from spec.model import Config
from spec.trace import Request, Workload, make_workload


@st.composite
def feasible_workloads(draw: st.DrawFn, max_requests: int = 6, max_prompt: int = 12, max_output: int = 6,
                       max_arrival: int = 6) -> Workload:
    """Draw a small feasible workload: tiny and ample caches, block_size 1, eos hits, arrivals mid-run."""
    block_size = draw(st.sampled_from((1, 2, 3, 4, 8)))
    max_num_seqs = draw(st.integers(1, 6))
    budget = draw(st.one_of(st.integers(1, max_num_seqs + 1), st.integers(1, 32)))
    eos = draw(st.sampled_from((None, None, 0, 7)))
    n = draw(st.integers(1, max_requests))
    requests = [
        Request(f"r{i}", draw(st.integers(1, max_prompt)), draw(st.integers(1, max_output)),
                draw(st.one_of(st.just(1), st.integers(1, max_arrival))))
        for i in range(n)
    ]
    requests.sort(key=lambda r: r.arrival)
    peak = tightest_num_blocks(block_size, requests)
    num_blocks = draw(st.one_of(st.just(peak), st.integers(peak, peak + 3), st.integers(peak, peak * n + 4)))
    eos_at = {}
    if eos is not None:
        for r in requests:
            eos_at[r.seq_id] = draw(st.sets(st.integers(0, r.max_tokens - 1), max_size=2))
    config = Config(num_blocks, block_size, max_num_seqs, budget, eos)
    return make_workload(config, requests, eos_at=eos_at)


def with_num_blocks(w: Workload, num_blocks: int) -> Workload:
    """The same workload with another cache size (for output equivalence: tight vs ample)."""
    return Workload(replace(w.config, num_blocks=num_blocks), w.requests, w.sample, w.name, w.tags)


def ample_num_blocks(w: Workload) -> int:
    """A cache that holds every request at its peak at once: no preemption can happen."""
    return ample_num_blocks_for(w.config.block_size, w.requests)


EDGE_CASES = ("block-boundary-chunk", "block-size-1", "max-num-seqs-running", "budget-below-max-num-seqs",
              "kv-one-peak", "eos-first-token", "eos-token-0", "arrivals-mid-run", "preemption-pressure", "any")


@st.composite
def edge_workloads(draw: st.DrawFn, max_requests: int = 4) -> Workload:
    """Draw a feasible workload biased toward one of the card's edge cases (EDGE_CASES), named in its tags.

    Preemption pressure (a cache at one request's peak, long outputs) is what makes two
    preemptions in one step, a sequence preempted several times, and a victim
    readmitted in the same step likely.
    """
    case = draw(st.sampled_from(EDGE_CASES))
    event(f"edge case: {case}")
    if case == "any":
        w = draw(feasible_workloads(max_requests=max_requests, max_prompt=8, max_output=4, max_arrival=4))
        return Workload(w.config, w.requests, w.sample, w.name, (case,))
    n = draw(st.integers(1 if case != "preemption-pressure" else 2, max_requests))
    block_size = 1 if case == "block-size-1" else draw(st.sampled_from((1, 2, 3, 4)))
    max_num_seqs = draw(st.integers(1, 4))
    if case == "block-boundary-chunk":
        budget = block_size * draw(st.integers(1, 3))
    elif case == "budget-below-max-num-seqs":
        max_num_seqs = draw(st.integers(2, 4))
        budget = draw(st.integers(1, max_num_seqs - 1))
    elif case == "max-num-seqs-running":
        max_num_seqs = min(n, max_num_seqs)
        budget = draw(st.integers(max_num_seqs, 16))
    else:
        budget = draw(st.integers(1, 12))
    long_outputs = case == "preemption-pressure"
    arrival = st.integers(1, 5) if case == "arrivals-mid-run" else st.just(1)
    requests = sorted((Request(f"r{i}", draw(st.integers(1, 8)), draw(st.integers(2 if long_outputs else 1, 5)),
                               draw(arrival)) for i in range(n)), key=lambda r: r.arrival)
    if requests[0].arrival != 1:
        requests[0] = Request(requests[0].seq_id, requests[0].prompt_len, requests[0].max_tokens, 1)
    peak = tightest_num_blocks(block_size, requests)
    extra = 0 if case in ("kv-one-peak", "preemption-pressure") else draw(st.integers(0, 2))
    if case == "kv-one-peak":
        extra = draw(st.integers(0, 1))
    eos: int | None = None
    eos_at: dict[str, set[int]] = {}
    if case in ("eos-first-token", "eos-token-0"):
        eos = 0 if case == "eos-token-0" else draw(st.sampled_from((0, 5)))
        for r in requests:
            positions = draw(st.sets(st.integers(0, r.max_tokens - 1), max_size=1))
            eos_at[r.seq_id] = positions | ({0} if case == "eos-first-token" and r is requests[0] else set())
    config = Config(peak + extra, block_size, max_num_seqs, budget, eos)
    return make_workload(config, requests, eos_at=eos_at, tags=(case,))


@st.composite
def scale_workloads(draw: st.DrawFn, families: tuple[str, ...] = tuple(scale.FAMILIES)) -> Workload:
    """Draw a scale-family workload (conformance/workloads/scale.py): only the family and the seed are drawn.

    Big workloads are built from a seed rather than drawn field by field, so the frozen
    corpus and this strategy share one definition and Hypothesis never shrinks a workload
    of hundreds of requests (the suite's own shrinker does, on the failing one alone).
    """
    family = draw(st.sampled_from(families))
    event(f"scale family: {family}")
    return scale.build(family, draw(st.integers(0, 2**32 - 1)))
