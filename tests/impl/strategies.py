"""Edge-biased workloads for the differential tests, beside conformance.workloads.feasible_workloads().

Each draw leans on one corner the card's pitfalls live in: a cache exactly the
size of the largest request (preemption storms, two victims in one step),
block_size 1, a token budget below max_num_seqs, eos (including token 0) and
arrivals while others run.
"""

from __future__ import annotations

from hypothesis import strategies as st

from spec.feasible import tightest_num_blocks
from spec.model import Config
from spec.trace import Request, Workload, make_workload


@st.composite
def edge_workloads(draw: st.DrawFn) -> Workload:
    """Draw a feasible workload pushed towards tiny caches and many preemptions."""
    storm = draw(st.booleans())  # many short requests racing for a cache that holds the largest one alone
    block_size = draw(st.sampled_from((1, 2) if storm else (1, 1, 2, 4)))
    max_num_seqs = draw(st.integers(3, 8) if storm else st.integers(1, 8))
    small_budget = st.integers(1, max(1, max_num_seqs - 1))
    budget = draw(st.integers(max_num_seqs, 32) if storm else st.one_of(small_budget, st.integers(1, 24)))
    eos = draw(st.sampled_from((None, 0, 0, 5)))
    n = draw(st.integers(3, 8) if storm else st.integers(2, 8))
    requests = []
    for i in range(n):
        prompt = draw(st.integers(1, 3) if storm else st.integers(1, 6) if draw(st.booleans()) else st.integers(1, 16))
        arrival = draw(st.sampled_from((1, 1, 1, 2) if storm else (1, 1, 2, 3, 5, 8)))
        requests.append(Request(f"s{i}", prompt, draw(st.integers(2 if storm else 1, 6)), arrival))
    requests.sort(key=lambda r: r.arrival)
    peak = tightest_num_blocks(block_size, requests)
    tiny = st.integers(peak, peak + 1)
    num_blocks = draw(tiny if storm else st.one_of(st.just(peak), tiny, st.integers(peak, 4 * peak)))
    eos_at = {}
    if eos is not None:
        for r in requests:
            eos_at[r.seq_id] = draw(st.sets(st.integers(0, r.max_tokens - 1), max_size=1))
    config = Config(num_blocks, block_size, max_num_seqs, budget, eos)
    return make_workload(config, requests, eos_at=eos_at, name="edge-storm" if storm else "edge")
