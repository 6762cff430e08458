"""Small scopes are deterministic and deduplicated; shrinking is deterministic and only ever simplifies."""

import itertools

from conformance.adapters import load_target
from conformance.checks.shrink import shrink
from conformance.checks.workload import predicate
from conformance.workloads.exhaustive import Scope, small_scope
from spec.model import Config
from spec.trace import Request, make_workload

TINY = Scope(requests=(1, 2), prompt_lens=(1, 2), max_tokens=(1, 2), arrivals=(1,), block_sizes=(1, 2),
             extra_blocks=(0, 5), max_num_seqs=(1, 2, 9), budgets=(1, 50))


def test_small_scope_is_deterministic_and_clamps_equivalent_configs():
    first = list(small_scope(TINY))
    assert first == list(small_scope(TINY))
    keys = [(w.config, w.requests) for w in first]
    assert len(keys) == len(set(keys))
    assert all(w.config.max_num_seqs <= len(w.requests) for w in first)  # 9 is clamped to the request count


def test_shrinking_finds_a_smaller_counterexample_deterministically():
    factory = load_target("conformance/mutants/preempt_to_tail.py")
    fails = predicate("differential", factory)
    big = make_workload(Config(6, 2, 4, 8), [Request(f"r{i}", 3 + i % 3, 3, 1 + i // 3) for i in range(6)])
    finding = fails(big)
    assert finding is not None
    small, f = shrink(big, finding, fails)
    assert (small, f) == shrink(big, finding, fails)
    assert len(small.requests) < len(big.requests) and fails(small) == f
    assert [r.seq_id for r in small.requests] == [f"a{i + 1}" for i in range(len(small.requests))]


def test_scope_enumeration_starts_with_single_requests():
    firsts = list(itertools.islice(small_scope(TINY), 3))
    assert all(len(w.requests) == 1 for w in firsts)
