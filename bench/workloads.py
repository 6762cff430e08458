"""The benchmark workloads as data: W1 decode steady state, W2 serving mix, W3 preemption storm, F mass finish.

Every workload is seeded and built the same way in every run, so the three
schedulers (floor, impl, spec) see the same requests at the same steps.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

Request = tuple[str, int, int, int]  # (seq_id, prompt_len, max_tokens, arrival step counted from 1)


@dataclass(frozen=True)
class BenchWorkload:
    """Config, requests and how much of the run is timed."""

    name: str  # W1, W2, W3, F1024, ...
    title: str  # one line for the table
    num_blocks: int
    block_size: int
    max_num_seqs: int
    max_num_batched_tokens: int
    requests: tuple[Request, ...]  # in arrival order
    steps: int | None = None  # steps to run; None: until every request has finished
    warmup: int = 0  # leading steps that are run but not timed
    stride: int = 1  # of the steps after warmup, every stride-th one is timed
    spec_start: int = 0  # the spec is timed from the state impl reaches after this many steps
    spec_steps: int = 0  # steps of the spec that are timed (0: the spec is not run)

    def config(self) -> dict[str, int]:
        return {"num_blocks": self.num_blocks, "block_size": self.block_size, "max_num_seqs": self.max_num_seqs,
                "max_num_batched_tokens": self.max_num_batched_tokens}


def sample(seq: object) -> int:
    """The model: always token 1, with no eos, so a sequence ends at max_tokens (the cheapest sample_fn)."""
    return 1


def spec_sample(seq_id: str, output: tuple[int, ...]) -> int:
    """The same model in the spec's signature."""
    return 1


def _blocks(tokens: int, block_size: int) -> int:
    return -(-tokens // block_size)


def w1_decode(steps: int, spec_steps: int) -> BenchWorkload:
    """512 running sequences decoding one token each per step; the prefill (step 1) is not timed."""
    requests = tuple((f"d{i}", 16, steps + 8, 1) for i in range(512))
    ample = 512 * _blocks(16 + steps + 8, 16)
    return BenchWorkload("W1", "decode steady state: 512 running, budget 8192, ample KV", num_blocks=ample,
                         block_size=16, max_num_seqs=512, max_num_batched_tokens=8192, requests=requests,
                         steps=steps + 1, warmup=1, spec_start=1, spec_steps=spec_steps)


def lognormal_requests(n: int, seed: int, prompt_median: float, output_median: float, rate: float,
                       prompt_sigma: float = 0.6, output_sigma: float = 0.8, cap: int = 4096) -> tuple[Request, ...]:
    """n requests with lognormal prompt and output lengths and Poisson arrivals at `rate` per step."""
    rng = random.Random(seed)
    t = 0.0
    out = []
    for i in range(n):
        t += rng.expovariate(rate)
        prompt = min(cap, max(1, round(rng.lognormvariate(math.log(prompt_median), prompt_sigma))))
        output = min(cap, max(1, round(rng.lognormvariate(math.log(output_median), output_sigma))))
        out.append((f"q{i}", prompt, output, 1 + int(t)))
    return tuple(out)


def w2_serving(n: int = 5000, spec_steps: int = 10, num_blocks: int = 16000) -> BenchWorkload:
    """5,000 lognormal requests (medians 600 and 200 tokens) arriving about 0.9 per step, run to completion."""
    requests = lognormal_requests(n, seed=2, prompt_median=600, output_median=200, rate=0.9)
    return BenchWorkload("W2", f"serving mix: {n} lognormal requests, bs 16, 256 seqs, budget 2048",
                         num_blocks=num_blocks, block_size=16, max_num_seqs=256, max_num_batched_tokens=2048,
                         requests=requests, spec_start=int(n * 0.6), spec_steps=spec_steps)


def w3_storm(n: int = 400, spec_steps: int = 20) -> BenchWorkload:
    """Many similar requests sharing a cache one block larger than the largest request's peak."""
    requests = lognormal_requests(n, seed=3, prompt_median=20, output_median=200, rate=1.0, prompt_sigma=0.3,
                                  output_sigma=0.3, cap=1024)
    peak = max(_blocks(p + m - 1, 16) for _, p, m, _ in requests)
    return BenchWorkload("W3", f"preemption storm: {n} requests, KV = largest peak + 1 = {peak + 1} blocks",
                         num_blocks=peak + 1, block_size=16, max_num_seqs=128, max_num_batched_tokens=1024,
                         requests=requests, spec_start=13_000, spec_steps=spec_steps)


def f_finish(n: int, rounds: int, spec: bool) -> BenchWorkload:
    """`rounds` times: n sequences arrive and prefill in one step, then all decode and finish in the next.

    Only the finishing steps are timed (stride 2); the spec is timed on the first one.
    """
    requests = tuple((f"f{r}.{i}", 4, 2, 2 * r + 1) for r in range(rounds) for i in range(n))
    return BenchWorkload(f"F{n}", f"mass finish: {n} running sequences finish in one step, {rounds} times",
                         num_blocks=n, block_size=16, max_num_seqs=n, max_num_batched_tokens=4 * n,
                         requests=requests, warmup=1, stride=2, spec_start=1, spec_steps=1 if spec else 0)
