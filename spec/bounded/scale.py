"""Every claim, judged on runs of spec/rules.py at the sizes where real code changes: past the encoding's reach.

The encoding is unrolled for at most five requests and sizes to 17 (wide.py), so a rule of spec/rules.py that is
wrong only past a threshold real code has passes every row that compares with it: a max_num_seqs capped at 256
(the largest CUDA-graph batch), a chunk capped at 2**16 tokens, a queue that holds 1024, a count kept in 32 bits,
a number that goes through a float past 2**53. The claims' statements (spec/invariants.py for I1..I6, execute.py
for the others) are a second statement of the rules that costs one pass over the state per step, whatever its
size. CH (each chunk is min(tokens left, budget left)) and AD (phase 2 stops only at a gate) pin down how much
runs and who is admitted, which the invariants alone leave open. So here spec.rules runs workloads that sit on
both sides of each threshold, and every claim judges every step; OUT and LIVE judge every run.

- crowds: max_num_seqs M = 2**k - 1, 2**k, 2**k + 1 and M + 1 requests of one prompt token and two output
  tokens, all arriving at once, ids that sort differently from their arrival (``r10`` before ``r9``), with a
  budget of M + 1 and of M: M are admitted in one step and the last waits on P2.full.
- numbers: v = 2**k - 1, 2**k, 2**k + 1 for the widths of integer types and of a double's mantissa, as the block
  size and the budget (a chunk of exactly v, a sequence across a block boundary), as a cache of v blocks that
  fills exactly with a request waiting behind it, and as a budget spent exactly by two prompts.
- preemptions: one sequence decoding inside a single block while another, admitted with a chunk of one block,
  cannot grow and preempts itself every step, and is admitted again the same step: num_preemptions passes 2**k.
"""

from __future__ import annotations

import time
import types
from dataclasses import dataclass

import spec.rules
from spec.bounded.execute import live_broken, run, run_violations, step_violations
from spec.feasible import ample_num_blocks, liveness_bound
from spec.model import DEFAULT_POLICY, Config
from spec.trace import Request, Workload, make_workload


@dataclass(frozen=True, slots=True)
class Tier:
    """How far the row goes: crowds to max_num_seqs 2**k + 1 for each k of crowd_bits (the largest puts 2**k + 2
    requests in flight), numbers to 2**k + 1 for each k of number_bits, 2**k + 1 self-preemptions of one
    sequence for each k of preemption_bits."""

    crowd_bits: tuple[int, ...]
    number_bits: tuple[int, ...]
    preemption_bits: tuple[int, ...]


# quick: crowds past 256 and 1024, every integer width, 257 preemptions (about 4 s); full adds a crowd of 2**11 + 2
# requests in flight and 1025 preemptions of one sequence
QUICK = Tier(crowd_bits=(8, 10), number_bits=(8, 16, 31, 32, 53, 63, 64), preemption_bits=(8,))
FULL = Tier(crowd_bits=(8, 10, 11), number_bits=QUICK.number_bits, preemption_bits=(8, 10))


def around(k: int) -> tuple[int, int, int]:
    """Both sides of the threshold 2**k."""
    return 2**k - 1, 2**k, 2**k + 1


def crowd(m: int, budget: int, policy: str) -> Workload:
    """max_num_seqs `m` and m + 1 one-token prompts arriving at once, on a cache that holds them all."""
    requests = [Request(f"r{i}", 1, 2, 1) for i in range(m + 1)]
    return make_workload(Config(ample_num_blocks(1, requests), 1, m, budget, 0, policy), requests)


def numbers(v: int, policy: str) -> tuple[Workload, ...]:
    """A block size and a budget of `v` that bind; a cache of `v` blocks that fills; a budget spent exactly."""
    long = [Request("a", 2 * v + 1, 2, 1), Request("b", 1, 2, 2)]  # chunks of v, then 1 across a block boundary
    fill = [Request("a", v, 1, 1), Request("b", 1, 1, 1)]  # a takes all v blocks; b waits for them
    split = [Request("a", max(v - 1, 1), 2, 1), Request("b", 2, 2, 1)]  # b's chunk is what a leaves of v
    return (make_workload(Config(ample_num_blocks(v, long), v, 2, v, 0, policy), long),
            make_workload(Config(v, 1, 2, v, 0, policy), fill),
            make_workload(Config(ample_num_blocks(1, split), 1, 2, v, 0, policy), split))


def thrash(p: int, policy: str) -> Workload:
    """`a` decodes for p + 1 steps inside one block; `b` is admitted with a chunk of one block, cannot grow to a
    second one while `a` holds it, and preempts itself: once a step, p times in a row (under p07)."""
    size = p + 2  # a's every token fits its one block
    requests = [Request("a", 1, p + 1, 1), Request("b", size + 1, 2, 1)]
    return make_workload(Config(2, size, 2, size + 1, 0, policy), requests)


def workloads(tier: Tier, policy: str = DEFAULT_POLICY) -> tuple[Workload, ...]:
    """The tier's workloads, cheapest kind first."""
    out: list[Workload] = []
    for k in tier.number_bits:
        for v in around(k):
            out.extend(numbers(v, policy))
    for k in tier.crowd_bits:
        for m in around(k):
            out.extend((crowd(m, m + 1, policy), crowd(m, m, policy)))
    out.extend(thrash(p, policy) for k in tier.preemption_bits for p in around(k))
    return tuple(out)


def judged(rules: types.ModuleType, workload: Workload) -> tuple[int, int, dict[str, list[str]]]:
    """Every claim broken on a run of `workload` on `rules`: its steps, preemptions, and messages by claim."""
    bound = liveness_bound(workload.requests)
    steps = run(rules, workload, bound)
    out: dict[str, list[str]] = {}
    before = rules.initial_state(workload.config)
    for s in steps:
        for claim, found in step_violations(s).items():
            out.setdefault(claim, []).extend(found)
        live = live_broken(before, s, workload.requests) if s.error is None else None
        if live is not None:
            out.setdefault("LIVE", []).append(live)
        before = s.after_update
    for claim, found in run_violations(rules, workload, bound).items():
        out.setdefault(claim, []).extend(found)
    return len(steps), steps[-1].after_update.num_preemptions if steps else 0, out


def scale_row(tier: Tier = QUICK, rules: types.ModuleType = spec.rules,
              policy: str = DEFAULT_POLICY) -> dict[str, object]:
    """The row `claims at scale`: the first claim broken on the tier's workloads, if any."""
    t = time.perf_counter()
    first, runs, steps, most = None, 0, 0, 0
    for w in workloads(tier, policy):
        n, preemptions, broken = judged(rules, w)
        runs, steps, most = runs + 1, steps + n, max(most, preemptions)
        if broken:
            claim, messages = next(iter(broken.items()))
            c = w.config
            first = (f"{claim} on {len(w.requests)} requests, num_blocks {c.num_blocks}, block_size {c.block_size}, "
                     f"max_num_seqs {c.max_num_seqs}, budget {c.max_num_batched_tokens}: {messages[0]}")
            break
    return {"claim": "claims at scale", "kind": "scale", "workloads": runs, "steps": steps,
            "largest": {"in_flight": max(len(w.requests) for w in workloads(tier, policy)),
                        "number": f"2^{max(tier.number_bits)}+1", "preemptions": most},
            "tier": {"crowd_bits": list(tier.crowd_bits), "number_bits": list(tier.number_bits),
                     "preemption_bits": list(tier.preemption_bits)},
            "verdict": "disagree" if first else "agree", "first_difference": first,
            "seconds": round(time.perf_counter() - t, 2)}
