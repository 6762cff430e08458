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
  cannot grow and preempts itself every step, and is admitted again the same step: num_preemptions passes 2**k;
  the same behind 2**k - 1, 2**k and 2**k + 1 waiting requests, so that each preemption puts the victim at the
  head of a queue that long (its first steps only: the queue then drains one at a time).
- states a long run would reach, started from directly (a run of 2**16 preemptions or of a 2**16-token output
  costs minutes): num_preemptions at 2**k - 2 before the preemptions above, for every width; and a sequence
  whose output is 2**k - 2 tokens long, decoding past 2**k to finish at 2**k + 2 (k = 8, 15, 16).

Every run stops at a cap (``step_cap``, far past the steps a correct run takes), so a rule that makes a run
endless fails the row instead of hanging it; a module that raises (in add() too) fails it on `crash`.
"""

from __future__ import annotations

import time
import types
from dataclasses import dataclass, replace

import spec.rules
from spec.bounded.execute import Draws, Step, ample, live_broken, outputs, run, step_violations
from spec.feasible import ample_num_blocks, liveness_bound
from spec.model import DEFAULT_POLICY, Config, Policy, Seq, State, Status
from spec.rules import blocks_for
from spec.trace import Request, Workload, make_workload


@dataclass(frozen=True, slots=True)
class Tier:
    """How far the row goes: crowds to max_num_seqs 2**k + 1 for each k of crowd_bits (the largest puts 2**k + 2
    requests in flight), numbers to 2**k + 1 for each k of number_bits, 2**k + 1 self-preemptions of one
    sequence for each k of preemption_bits."""

    crowd_bits: tuple[int, ...]
    number_bits: tuple[int, ...]
    preemption_bits: tuple[int, ...]
    output_bits: tuple[int, ...] = (8, 15, 16)  # outputs past 2**k (int16, uint16)


@dataclass(frozen=True, slots=True)
class Probe:
    """One run of the row: `workload` from the initial state, or from `start` (a state a long run reaches), for
    at most `steps` steps (None: until it drains, within step_cap)."""

    workload: Workload
    start: State | None = None
    steps: int | None = None

    def held(self) -> tuple[Seq, ...]:
        """The sequences the start state holds (none from the initial state)."""
        return self.start.waiting + self.start.running if self.start is not None else ()

    def requests(self) -> tuple[Request, ...]:
        """Every request of the run: the start state's sequences (as arrived at step 1), then the workload's."""
        return tuple(Request(q.seq_id, q.prompt_len, q.max_tokens, 1) for q in self.held()) + self.workload.requests


# quick: crowds past 256 and 1024, every integer width, 257 preemptions (about 2 s); full adds a crowd of 2**11 + 2
# requests in flight and 1025 preemptions of one sequence
QUICK = Tier(crowd_bits=(8, 10), number_bits=(8, 16, 31, 32, 53, 63, 64), preemption_bits=(8,))
FULL = Tier(crowd_bits=(8, 10, 11), number_bits=QUICK.number_bits, preemption_bits=(8, 10))


def around(k: int) -> tuple[int, int, int]:
    """Both sides of the threshold 2**k."""
    return 2**k - 1, 2**k, 2**k + 1


def crowd(m: int, budget: int, policy: Policy) -> Workload:
    """max_num_seqs `m` and m + 1 one-token prompts arriving at once, on a cache that holds them all."""
    requests = [Request(f"r{i}", 1, 2, 1) for i in range(m + 1)]
    return make_workload(Config(ample_num_blocks(1, requests), 1, m, budget, 0, policy), requests)


def numbers(v: int, policy: Policy) -> tuple[Workload, ...]:
    """A block size and a budget of `v` that bind; a cache of `v` blocks that fills; a budget spent exactly."""
    long = [Request("a", 2 * v + 1, 2, 1), Request("b", 1, 2, 2)]  # chunks of v, then 1 across a block boundary
    fill = [Request("a", v, 1, 1), Request("b", 1, 1, 1)]  # a takes all v blocks; b waits for them
    split = [Request("a", max(v - 1, 1), 2, 1), Request("b", 2, 2, 1)]  # b's chunk is what a leaves of v
    return (make_workload(Config(ample_num_blocks(v, long), v, 2, v, 0, policy), long),
            make_workload(Config(v, 1, 2, v, 0, policy), fill),
            make_workload(Config(ample_num_blocks(1, split), 1, 2, v, 0, policy), split))


def thrash(p: int, policy: Policy) -> Workload:
    """`a` decodes for p + 1 steps inside one block; `b` is admitted with a chunk of one block, cannot grow to a
    second one while `a` holds it, and preempts itself: once a step, p times in a row (under p07)."""
    size = p + 2  # a's every token fits its one block
    requests = [Request("a", 1, p + 1, 1), Request("b", size + 1, 2, 1)]
    return make_workload(Config(2, size, 2, size + 1, 0, policy), requests)


def queued_thrash(waiting: int, policy: Policy) -> Workload:
    """thrash(3) with `waiting` one-token requests behind: each preemption puts the victim at the head of them."""
    base = thrash(3, policy)
    requests = base.requests + tuple(Request(f"q{i}", 1, 1, 1) for i in range(waiting))
    return make_workload(base.config, requests)


def long_output(length: int, policy: Policy) -> Probe:
    """A state a run of `length` decode steps reaches: `long` running with an output of `length` tokens (drawn by
    the proofs' sampler: base + d), 4 tokens from its max_tokens; a short request arrives beside it."""
    size = 16
    config = Config(-(-(length + 4) // size) + 2, size, 2, 4, 0, policy)
    long = Seq("long", 1, length + 4, tuple(100 + d for d in range(length)), length, blocks_for(size, length),
               Status.RUNNING)
    start = replace(spec.rules.initial_state(config), running=(long,), blocks_used=long.num_blocks)
    return Probe(make_workload(config, [Request("b", 1, 2, 1)], base={"b": 200}), start)


def workloads(tier: Tier, policy: Policy = DEFAULT_POLICY) -> tuple[Probe, ...]:
    """The tier's runs, cheapest kind first."""
    out: list[Probe] = []
    for k in tier.number_bits:
        for v in around(k):
            out.extend(Probe(w) for w in numbers(v, policy))
        out.append(Probe(thrash(4, policy), replace(spec.rules.initial_state(thrash(4, policy).config),
                                                    num_preemptions=2**k - 2)))
    out.extend(long_output(2**k - 2, policy) for k in tier.output_bits)
    for k in tier.crowd_bits:
        for m in around(k):
            out.extend((Probe(crowd(m, m + 1, policy)), Probe(crowd(m, m, policy)),
                        Probe(queued_thrash(m, policy), steps=8)))
    out.extend(Probe(thrash(p, policy)) for k in tier.preemption_bits for p in around(k))
    return tuple(out)


def step_cap(probe: Probe) -> int:
    """The most steps a run of the row may take: its own limit, or four times the steps of its requests run one
    after another without preemption, plus 64 (a correct run of every probe here takes far fewer; the liveness
    bound, the sum of every token, is out of reach for prompts of 2**64)."""
    if probe.steps is not None:
        return probe.steps
    c = probe.workload.config
    alone = sum(-(-r.prompt_len // c.max_num_batched_tokens) + r.max_tokens for r in probe.requests())
    last = max((r.arrival for r in probe.workload.requests), default=1)
    return min(liveness_bound(probe.requests()), 4 * alone + last + 64)


def judged(rules: types.ModuleType, probe: Probe) -> tuple[int, int, dict[str, list[str]]]:
    """Every claim broken on a run of `probe` on `rules`: its steps, its preemptions, and messages by claim."""
    w, cap, requests, held = probe.workload, step_cap(probe), probe.requests(), probe.held()
    draws = Draws(dict(w.sample.base) | {q.seq_id: 100 for q in held}, dict(w.sample.eos_at),
                  {q.seq_id: len(q.output) for q in held})
    first = probe.start if probe.start is not None else rules.initial_state(w.config)
    steps = run(rules, w, cap, draws, first)
    out: dict[str, list[str]] = {}
    before = first
    for s in steps:
        for claim, found in step_violations(s).items():
            out.setdefault(claim, []).extend(found)
        live = live_broken(before, s, requests) if s.error is None else None
        if live is not None:
            out.setdefault("LIVE", []).append(live)
        before = s.after_update
    if probe.steps is None and not any(s.error for s in steps):
        out.update(whole_run(rules, probe, steps, cap))
    return len(steps), before.num_preemptions - first.num_preemptions, out


def whole_run(rules: types.ModuleType, probe: Probe, steps: tuple[Step, ...], cap: int) -> dict[str, list[str]]:
    """LIVE's drain within the row's cap, and OUT against the same workload on an ample cache (from the initial
    state only: a start state has no unpreempted twin)."""
    last = steps[-1].after_update if steps else None
    if last is not None and (last.waiting or last.running):
        return {"LIVE": [f"not drained within the row's cap of {cap} steps (step_cap)"]}
    if probe.start is not None:
        return {}
    a, b = outputs(steps), outputs(run(rules, ample(probe.workload), cap))
    diff = [f"{i}: {list(a[i])} with preemption, {list(b[i])} without" for i in sorted(a.keys() & b.keys())
            if a[i] != b[i]]
    return {"OUT": diff} if diff else {}


def scale_row(tier: Tier = QUICK, rules: types.ModuleType = spec.rules,
              policy: Policy = DEFAULT_POLICY) -> dict[str, object]:
    """The row `claims at scale`: the first claim broken on the tier's runs, if any."""
    t = time.perf_counter()
    first, runs, steps, most = None, 0, 0, 0
    probes = workloads(tier, policy)
    for probe in probes:
        n, preemptions, broken = judged(rules, probe)
        runs, steps, most = runs + 1, steps + n, max(most, preemptions)
        if broken:
            claim, messages = next(iter(broken.items()))
            c = probe.workload.config
            start = " from a start state" if probe.start is not None else ""
            first = (f"{claim} on {len(probe.requests())} requests{start}, num_blocks {c.num_blocks}, block_size "
                     f"{c.block_size}, max_num_seqs {c.max_num_seqs}, budget {c.max_num_batched_tokens}: "
                     f"{messages[0]}")
            break
    return {"claim": "claims at scale", "kind": "scale", "workloads": runs, "steps": steps,
            "largest": {"in_flight": max(len(p.requests()) for p in probes), "number": f"2^{max(tier.number_bits)}+1",
                        "preemptions": most, "output": 2**max(tier.output_bits) + 2},
            "tier": {"crowd_bits": list(tier.crowd_bits), "number_bits": list(tier.number_bits),
                     "preemption_bits": list(tier.preemption_bits), "output_bits": list(tier.output_bits)},
            "verdict": "disagree" if first else "agree", "first_difference": first,
            "seconds": round(time.perf_counter() - t, 2)}
