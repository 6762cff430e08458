"""Scale families: workloads far outside the small scopes, built deterministically from a seed.

The small scopes (exhaustive, edge-biased, the state machine) prove the rules on a
few tiny requests; bugs that live in arithmetic, identity, queue length or run
length need big numbers instead. Each family is a function ``(random.Random) ->
Workload``; the same seed always gives the same workload, so the frozen corpus
and the Hypothesis strategy (which draws only the family and the seed) share them.

- large-numbers: block sizes in the thousands, prompts in the thousands, budgets
  and prompts at and past 2**53, token and eos ids far outside CPython's small-int
  cache (10**6 + k, 2**60 + k, negative);
- crowd: dozens to hundreds of requests, bursts of arrivals in one step, waiting
  queues far longer than max_num_seqs (1 or 2, sometimes more);
- long-run: a few requests with outputs in the hundreds to thousands of tokens;
- thrash: a cache at or just above one request's peak and several long outputs,
  so one sequence is preempted many times;
- mix: a crowd that thrashes with large ids and an eos.
Every workload is feasible: each request fits the cache alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from spec.feasible import tightest_num_blocks
from spec.model import Config
from spec.trace import Request, Workload, make_workload

BIG_IDS = (10**6, 2**31 - 7, 2**32 + 1, 2**53 - 3, 2**60, 2**64 + 5, -(10**6), -(2**40), -300)
TWO_53 = 2**53


def _ids(rng: random.Random, n: int) -> tuple[dict[str, int], int]:
    """Per-sequence first tokens and an eos id, all far outside -5..256 and distinct from every token."""
    origin = rng.choice(BIG_IDS)
    stride = rng.choice((1_000, 10**6, 2**33))
    base = {f"s{i}": origin + i * stride for i in range(n)}
    eos = origin - rng.choice((7, 10**5 + 3, 2**20 + 1))  # below every token: never sampled by accident
    return base, eos


def _eos_at(rng: random.Random, requests: list[Request], share: float) -> dict[str, set[int]]:
    """Eos positions for about `share` of the requests (position 0 included sometimes)."""
    out: dict[str, set[int]] = {}
    for r in requests:
        if rng.random() < share:
            out[r.seq_id] = {rng.choice((0, rng.randrange(r.max_tokens)))}
    return out


def _peak(block_size: int, requests: list[Request]) -> int:
    return tightest_num_blocks(block_size, requests)


def _finish(config: Config, requests: list[Request], base: dict[str, int] | None, eos_at: dict[str, set[int]],
            tag: str) -> Workload:
    requests.sort(key=lambda r: r.arrival)
    return make_workload(config, requests, base=base, eos_at=eos_at, tags=(tag,))


def large_numbers(rng: random.Random) -> Workload:
    """Big block sizes and prompts, budgets and prompts around 2**53, ids outside the small-int cache."""
    n = rng.randint(2, 6)
    huge = rng.random() < 0.4  # prompts past 2**53: only integer arithmetic gets the block counts right
    block_size = rng.choice((2**40, 2**41 + 1, 10**9 + 7)) if huge else rng.choice((512, 1000, 1024, 4096, 4099))
    requests = []
    for i in range(n):
        prompt = TWO_53 + rng.randint(-3, 5) if huge else rng.randint(1, 6000)
        requests.append(Request(f"s{i}", max(1, prompt), rng.randint(1, 6), rng.randint(1, 4)))
    requests[0] = Request("s0", requests[0].prompt_len, requests[0].max_tokens, 1)
    peak = _peak(block_size, requests)
    num_blocks = peak + rng.choice((0, 0, 1, peak))
    if huge:  # a budget in the same range, or the run would take 2**53 / budget steps
        budget = rng.choice((TWO_53 + 1, TWO_53 - 1, 2**54 + 3, 2**60))
    else:
        budget = rng.choice((TWO_53 + 1, 2**60, block_size * rng.randint(1, 3) + 1, rng.randint(1000, 9000)))
    base, eos = _ids(rng, n)
    config = Config(num_blocks, block_size, rng.randint(1, 4), budget, eos)
    return _finish(config, requests, base, _eos_at(rng, requests, 0.5), "large-numbers")


def crowd(rng: random.Random) -> Workload:
    """Dozens to hundreds of requests, half of them in bursts; max_num_seqs 1 or 2 below 100 requests.

    Sizes keep steps x requests near 10**4: white-box checking is linear in both.
    """
    n = rng.choice((24, 40, 64, 120, 200))
    bursts = sorted(rng.sample(range(2, 30), 3))
    requests = [Request(f"s{i}", rng.randint(1, 16), rng.randint(1, 3 if n <= 64 else 2),
                        1 if i < n // 2 else rng.choice(bursts)) for i in range(n)]
    block_size = rng.choice((1, 2, 4, 16))
    peak = _peak(block_size, requests)
    num_blocks = rng.choice((peak, peak + 2, 3 * peak, 8 * peak))
    seqs = rng.choice((1, 2)) if n <= 64 else rng.choice((8, 16))
    budget = rng.choice((2, 16, 256)) if n <= 40 else rng.choice((32, 256))
    base, eos = _ids(rng, n) if rng.random() < 0.5 else (None, rng.choice((0, 1)))
    config = Config(num_blocks, block_size, seqs, budget, eos)
    return _finish(config, requests, base, _eos_at(rng, requests, 0.2), "crowd")


def long_run(rng: random.Random) -> Workload:
    """A few requests whose outputs run for hundreds to thousands of steps."""
    n = rng.randint(1, 3)
    requests = [Request(f"s{i}", rng.randint(1, 40), rng.randint(100, 700), 1 if i == 0 else rng.randint(1, 300))
                for i in range(n)]
    block_size = rng.choice((1, 4, 16, 128))
    peak = _peak(block_size, requests)
    num_blocks = rng.choice((peak, peak + 3, 2 * peak))
    base, eos = _ids(rng, n)
    config = Config(num_blocks, block_size, rng.choice((1, 2, 4)), rng.choice((1, 3, 16, 64)), eos)
    return _finish(config, requests, base, _eos_at(rng, requests, 0.3), "long-run")


def thrash(rng: random.Random) -> Workload:
    """A cache at one request's peak and several long outputs: one sequence is preempted again and again."""
    n = rng.randint(3, 6)
    requests = [Request(f"s{i}", rng.randint(1, 6), rng.randint(12, 60), 1 if i < 2 else rng.randint(1, 20))
                for i in range(n)]
    block_size = rng.choice((1, 1, 2, 4))
    peak = _peak(block_size, requests)
    config = Config(peak + rng.choice((0, 0, 1)), block_size, rng.randint(2, n), rng.choice((n, 2 * n, 64)))
    return _finish(config, requests, None, {}, "thrash")


def mix(rng: random.Random) -> Workload:
    """A crowd under thrash pressure: large ids, an eos, a burst, a cache a block or two above one peak."""
    n = rng.choice((12, 20, 32))
    burst = rng.randint(2, 10)
    requests = [Request(f"s{i}", rng.randint(1, 40), rng.randint(4, 16),
                        1 if i < n // 3 else rng.choice((burst, rng.randint(1, 40)))) for i in range(n)]
    block_size = rng.choice((1, 3, 16))
    peak = _peak(block_size, requests)
    base, eos = _ids(rng, n)
    config = Config(peak + rng.choice((0, 1, 2)), block_size, rng.choice((1, 2, 4, 8)), rng.choice((17, 128)), eos)
    return _finish(config, requests, base, _eos_at(rng, requests, 0.3), "mix")


FAMILIES: dict[str, Callable[[random.Random], Workload]] = {
    "large-numbers": large_numbers, "crowd": crowd, "long-run": long_run, "thrash": thrash, "mix": mix}


def build(family: str, seed: int) -> Workload:
    """The workload of `family` for `seed` (deterministic)."""
    if family not in FAMILIES:
        raise ValueError(f"scale family {family!r} is unknown; choose one of {sorted(FAMILIES)}")
    return FAMILIES[family](random.Random(f"{family}/{seed}"))
