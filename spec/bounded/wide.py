"""The encoding against spec/rules.py past the claims' bounds: five requests, sizes to 17, 24 steps.

The claims are proved at block_size <= 4 with three requests (four in the induction) and prompts of at most 8
tokens. A rule of spec/rules.py that is wrong only past those sizes passes every row that stays inside them:
a fast path for block sizes from 8, a max_num_seqs cap that changes from 4, a rule for a queue of four waiting,
a prompt of 9 tokens or more. The encoding states the rules for any bounds, so here it is unrolled for wider
ones and compared with the spec step by step, as the validation does (validate.Validator, evaluated without a
solver). Every size is drawn on both sides of each power of two in range (3/4/5, 7/8/9, 15/16/17), and half
the caches are the tightest the requests allow, so that exact fits and preemptions are common.
"""

from __future__ import annotations

import random
import time
import types
from dataclasses import replace

import spec.rules
from spec.bounded.encode import Bounds
from spec.bounded.validate import SEED, Validator
from spec.feasible import ample_num_blocks, tightest_num_blocks
from spec.model import DEFAULT_POLICY, Config, Policy
from spec.trace import Request, Workload, make_workload

WIDE = Bounds(slots=5, steps=24, num_blocks=64, block_size=17, budget=24, max_num_seqs=5, prompt_len=17,
              max_tokens=17)
SIZES = (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17)  # both sides of 4, 8 and 16
COUNT = 1024  # workloads in `prove --quick`


def _size(rng: random.Random, top: int) -> int:
    return rng.choice([s for s in SIZES if s <= top])


def candidate(rng: random.Random, b: Bounds = WIDE) -> Workload:
    """A feasible workload within `b`: four or five requests (queues of four waiting), sizes at the thresholds.
    One in three is a crowd (short prompts arriving at once, room for all: every seat of max_num_seqs fills),
    one in three a queue (all arriving at once on the tightest cache: a head that does not fit, with smaller
    requests behind it)."""
    while True:
        bs = _size(rng, b.block_size)
        n = rng.randint(b.slots - 1, b.slots)
        mode = rng.choice(("crowd", "queue", "any"))
        crowd = mode == "crowd"
        arrivals = sorted(1 if mode != "any" else rng.choice((1, 1, 2, 3)) for _ in range(n))
        names = [f"s{k}" for k in rng.sample(range(10), n)]  # ids that do not sort in arrival order
        reqs = [Request(names[j], _size(rng, 4 if crowd else b.prompt_len), _size(rng, 9 if crowd else b.max_tokens),
                        arrivals[j]) for j in range(n)]
        tight = tightest_num_blocks(bs, reqs)
        if tight > b.num_blocks:
            continue
        room = min(b.num_blocks, ample_num_blocks(bs, reqs))
        num_blocks = room if crowd else tight if mode == "queue" or rng.random() < 0.5 else \
            rng.randint(tight, max(tight, room))
        budget = rng.choice([s for s in SIZES if n <= s <= b.budget]) if crowd else _size(rng, b.budget)
        config = Config(num_blocks, bs, rng.randint(1, b.max_num_seqs), budget, 0, b.policy)
        eos = {r.seq_id: [k for k in range(r.max_tokens) if rng.random() < 0.1] for r in reqs}
        return make_workload(config, reqs, eos_at=eos)


def wide_row(count: int = COUNT, rules: types.ModuleType = spec.rules, policy: Policy = DEFAULT_POLICY,
             validator: Validator | None = None) -> dict[str, object]:
    """The row `encoding == spec.rules (wide)`: the first difference on `count` drawn workloads, if any
    (`validator`: the encoding of WIDE under `policy`, compared with `rules`, if already built)."""
    t = time.perf_counter()
    b = replace(WIDE, policy=policy)
    v = validator or Validator(b, rules)
    rng = random.Random(f"{SEED}-wide-{policy}")
    first, compared = None, 0
    for _ in range(count):
        w = candidate(rng, b)
        found = v.compare(w)
        compared += 1
        if found is not None:
            first = found
            break
    verdict = "disagree" if first is not None else "agree"
    return {"claim": "encoding == spec.rules (wide)", "kind": "wide", "workloads": compared,
            "bounds": {"slots": b.slots, "steps": b.steps, "num_blocks": b.num_blocks, "block_size": b.block_size,
                       "budget": b.budget, "max_num_seqs": b.max_num_seqs, "prompt_len": b.prompt_len,
                       "max_tokens": b.max_tokens},
            "verdict": verdict, "first_difference": None if first is None else str(first),
            "seconds": round(time.perf_counter() - t, 2)}
