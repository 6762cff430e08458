"""Bounded-exhaustive small scopes: every feasible workload within stated bounds, deduplicated.

Enumeration is deterministic (smallest first). Two workloads that the rules cannot
tell apart are generated once: ``max_num_seqs`` at or above the number of requests,
a budget that covers every token of the workload, a cache that holds every request
at its peak, and a block at least as large as any sequence each behave like the
largest value, so they are clamped to it before deduplication.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace

from spec.feasible import ample_num_blocks, tightest_num_blocks
from spec.model import Config
from spec.trace import Request, Workload, make_workload


@dataclass(frozen=True, slots=True)
class Scope:
    """The bounds of one enumeration; every field is a tuple of the values tried."""

    requests: tuple[int, ...] = (1, 2, 3)  # how many requests
    prompt_lens: tuple[int, ...] = (1, 2, 3, 5)
    max_tokens: tuple[int, ...] = (1, 2, 3)
    arrivals: tuple[int, ...] = (1, 2)  # arrival steps after the first request's (always 1)
    block_sizes: tuple[int, ...] = (1, 2, 4)
    extra_blocks: tuple[int, ...] = (0, 1, 2)  # num_blocks = largest single peak + this
    max_num_seqs: tuple[int, ...] = (1, 2, 3)
    budgets: tuple[int, ...] = (1, 2, 3, 4, 8)
    eos_first: bool = False  # also try eos = 0 sampled as request 1's first token

    def to_json(self) -> dict[str, object]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in
                ((f, getattr(self, f)) for f in self.__dataclass_fields__)}


SMALL = Scope(requests=(1, 2, 3), prompt_lens=(1, 3), max_tokens=(1, 2), arrivals=(1, 2), block_sizes=(1, 2),
              extra_blocks=(0,), max_num_seqs=(1, 2), budgets=(1, 3))
BUILD = Scope(requests=(1, 2, 3), prompt_lens=(1, 3, 5), max_tokens=(1, 3), arrivals=(1, 3),
              block_sizes=(1, 2, 4), extra_blocks=(0, 2), max_num_seqs=(1, 3), budgets=(2, 4, 16))



def _request_lists(scope: Scope) -> Iterator[tuple[Request, ...]]:
    shapes = list(itertools.product(scope.prompt_lens, scope.max_tokens))
    for n in scope.requests:
        for arrivals in itertools.combinations_with_replacement(sorted(set(scope.arrivals) | {1}), n - 1):
            steps = (1, *arrivals)
            for chosen in itertools.product(shapes, repeat=n):
                yield tuple(Request(f"a{i + 1}", p, m, steps[i]) for i, (p, m) in enumerate(chosen))


def canonical(config: Config, requests: tuple[Request, ...]) -> Config:
    """Clamp config values the rules cannot tell from larger ones (the symmetry reduction)."""
    tokens = sum(r.prompt_len + r.max_tokens for r in requests)
    block_size = min(config.block_size, max(r.prompt_len + r.max_tokens for r in requests))
    ample = ample_num_blocks(block_size, requests)
    return replace(config, num_blocks=min(config.num_blocks, ample), block_size=block_size,
                   max_num_seqs=min(config.max_num_seqs, len(requests)),
                   max_num_batched_tokens=min(config.max_num_batched_tokens, tokens))


def small_scope(scope: Scope) -> Iterator[Workload]:
    """Every feasible workload within `scope`, each equivalence class once, in a fixed order."""
    seen: set[tuple[object, ...]] = set()
    for requests in _request_lists(scope):
        eos_options: list[int | None] = [None, 0] if scope.eos_first else [None]
        for bs, extra, seqs, budget, eos in itertools.product(scope.block_sizes, scope.extra_blocks,
                                                              scope.max_num_seqs, scope.budgets, eos_options):
            peak = tightest_num_blocks(bs, requests)
            config = canonical(Config(peak + extra, bs, seqs, budget, eos), requests)
            key = (config, requests)
            if key in seen:
                continue
            seen.add(key)
            eos_at = {"a1": (0,)} if eos is not None else {}
            yield make_workload(config, requests, eos_at=eos_at, name="", tags=())
