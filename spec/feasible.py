"""Feasibility, stated once (docs/rules.md, "Settled here"): which caches a workload fits, and how long it runs.

A request fits alone when the blocks of its peak (``rules.peak_blocks``) are at most num_blocks;
``rules.check_request`` refuses one that does not, and every generator, shrinker and proof of the
project draws or keeps only workloads that ``feasible`` accepts. With that, some sequence makes
progress at every step with work, so every workload ends within ``liveness_bound`` steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from spec.model import Config
from spec.rules import peak_blocks


class Demand(Protocol):
    """What feasibility reads of a request."""

    @property
    def prompt_len(self) -> int: ...
    @property
    def max_tokens(self) -> int: ...


class Arriving(Demand, Protocol):
    @property
    def arrival(self) -> int: ...  # the step before whose schedule() the request is added, from 1


def tightest_num_blocks(block_size: int, requests: Iterable[Demand]) -> int:
    """The fewest KV blocks with which every request fits alone: a workload is feasible with no fewer."""
    return max((peak_blocks(block_size, r.prompt_len, r.max_tokens) for r in requests), default=0)


def ample_num_blocks(block_size: int, requests: Iterable[Demand]) -> int:
    """KV blocks for every request at its peak at once: with this many, no preemption can happen."""
    return sum(peak_blocks(block_size, r.prompt_len, r.max_tokens) for r in requests)


def feasible(config: Config, requests: Iterable[Demand]) -> bool:
    """Whether every request fits the cache alone (what check_request demands of each)."""
    return tightest_num_blocks(config.block_size, requests) <= config.num_blocks


def liveness_bound(requests: Sequence[Arriving]) -> int:
    """The most steps a feasible workload can take: (last arrival - 1) + sum(prompt_len + max_tokens - 1).

    Every step that has arrived, unfinished work advances running[0] by >= 1 token
    (running[0] is never preempted), and a sequence computes at most
    prompt_len + max_tokens - 1 tokens while it is running[0]; only steps before the
    last arrival can be idle.
    """
    if not requests:
        return 0
    return max(r.arrival for r in requests) - 1 + sum(r.prompt_len + r.max_tokens - 1 for r in requests)
