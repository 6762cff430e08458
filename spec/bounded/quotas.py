"""Coverage quotas of the validation: each kind of step, at each block size of the claims' bounds.

The validation compares the encoding with spec.rules only on the steps its workloads make. A kind of
step that never occurs at some block size is compared nowhere there, and a bug confined to it passes
(a blocks_for wrong only at block_size 4, an encoding whose ceiling is wrong only in its largest-block
branch). So every (kind, block size) cell must hold ``QUOTA`` compared steps, or the validation fails.
The random stream fills most cells; ``aimed`` then draws workloads for the cells still short (that
block size, requests shaped to thrash) until the spec's run has the kind, so the quick run meets the
quotas too. Kinds are read off the spec's own run (``step_kinds``), never off the encoding.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import spec.rules
from spec.bounded.encode import Bounds
from spec.bounded.execute import EOS, Step, run
from spec.feasible import tightest_num_blocks
from spec.model import DEFAULT_POLICY, Config, Policy
from spec.trace import Request, Workload, make_workload

QUOTA = 3  # compared steps per (kind, block size)
ATTEMPTS = 5_000  # candidates drawn per block size before a short cell is given up (the row then fails)
PREEMPTS = ("P1.preempt", "P1.skip_self")

KINDS: dict[str, str] = {
    "preempt": "phase 1 preempts another sequence (P1.preempt)",
    "self": "a sequence preempts itself (P1.skip_self)",
    "victims": "two or more preemptions in one step",
    "readmit": "phase 2 admits a sequence preempted earlier (in this step or before)",
    "readmit_output": "phase 2 admits a preempted sequence that has output (it recomputes prompt + output)",
    "finish": "a sequence finishes",
    "finishes": "two sequences finish in one step",
    "max_then_eos": "in one step, a sequence finishing at max_tokens comes before one finishing on eos in the batch",
    "arrive_behind": "a request arrives while waiting is not empty (it joins the tail)",
    "admit_after_3": "phase 2 admits in a step that starts with three or more preemptions behind it",
}
ANY_SIZE = ("admit_after_3",)  # rare at large blocks under vllm-v1: its quota is over all block sizes together
POLICY_KINDS: dict[str, tuple[str, Callable[[Policy], bool]]] = {  # kind: what it is, the policies that have it
    "whole": ("the head waits: blocks for its whole sequence are not free (P2.whole)", lambda p: p.reserve_full_isl),
    "held": ("nobody is admitted because phase 1 preempted (P2.policy)", lambda p: p.holds_after_preemption),
}


def kinds_for(policy: Policy) -> tuple[str, ...]:
    """The kinds whose quotas a stream under `policy` must fill."""
    return tuple(KINDS) + tuple(k for k, (_, has) in POLICY_KINDS.items() if has(policy))


def victim(message: str) -> str:
    """The victim named in a P1.preempt / P1.skip_self message ("... preempt r2 = running[-1] ...")."""
    return message.split(": preempt ", 1)[1].split(" ", 1)[0]


def _finish_order(s: Step) -> list[bool]:
    """For the sequences finished in step `s`, in batch order: whether each ended on eos."""
    done = {q.seq_id: q for q in s.after_update.finished if q.seq_id in s.finished}
    return [done[i].output[-1] == EOS for i, _ in s.batch if i in done]


def step_kinds(steps: tuple[Step, ...]) -> list[frozenset[str]]:
    """The kinds (KINDS, POLICY_KINDS) of each step of a run of the spec."""
    out: list[frozenset[str]] = []
    preempted: set[str] = set()
    waiting_before = False  # waiting was not empty when the step's arrivals came
    held = len(steps[0].before.seqs()) if steps else 0
    for s in steps:
        rules = [e.rule for e in s.events]
        preempted |= {victim(e.message) for e in s.events if e.rule in PREEMPTS}
        admitted = {e.seq_id for e in s.events if e.rule == "P2"}
        back = [q for q in s.after_schedule.running if q.seq_id in admitted & preempted]
        eos = _finish_order(s)
        found = {"preempt": "P1.preempt" in rules, "self": "P1.skip_self" in rules,
                 "victims": sum(r in PREEMPTS for r in rules) >= 2, "readmit": bool(back),
                 "readmit_output": any(q.output for q in back), "finish": bool(s.finished),
                 "finishes": len(s.finished) >= 2,
                 "max_then_eos": any(not a and b for k, a in enumerate(eos) for b in eos[k + 1:]),
                 "arrive_behind": waiting_before and len(s.before.seqs()) > held,
                 "admit_after_3": bool(admitted) and s.before.num_preemptions >= 3,
                 "whole": "P2.whole" in rules, "held": "P2.policy" in rules}
        out.append(frozenset(k for k, hit in found.items() if hit))
        waiting_before, held = bool(s.after_update.waiting), len(s.after_update.seqs())
    return out


@dataclass(slots=True)
class Quotas:
    """Compared steps per (kind, block size) cell, against QUOTA for each; block size 0 is "any"."""

    kinds: tuple[str, ...]
    block_sizes: tuple[int, ...]
    quota: int = QUOTA
    cells: dict[tuple[str, int], int] = field(default_factory=dict)

    def sizes(self, kind: str) -> tuple[int, ...]:
        return (0,) if kind in ANY_SIZE else self.block_sizes

    def hits(self, steps: tuple[Step, ...]) -> list[tuple[str, int]]:
        """The cells a run adds a step to, once per step."""
        if not steps:
            return []
        bs = steps[0].before.config.block_size
        return [(kind, 0 if kind in ANY_SIZE else bs) for found in step_kinds(steps) for kind in found
                if kind in self.kinds]

    def count(self, steps: tuple[Step, ...]) -> None:
        for cell in self.hits(steps):
            self.cells[cell] = self.cells.get(cell, 0) + 1

    def short(self) -> list[tuple[str, int]]:
        """The cells below the quota."""
        return [(k, bs) for k in self.kinds for bs in self.sizes(k) if self.cells.get((k, bs), 0) < self.quota]

    def fills(self, steps: tuple[Step, ...]) -> bool:
        """Whether the run adds a step to a cell that is still short."""
        return bool(set(self.hits(steps)) & set(self.short()))

    def to_json(self) -> dict[str, object]:
        return {"quota": self.quota, "block_sizes": list(self.block_sizes),
                "cells": {k: {str(bs or "any"): self.cells.get((k, bs), 0) for bs in self.sizes(k)}
                          for k in self.kinds},
                "short": [f"{k} at block_size {bs or 'any'}" for k, bs in self.short()]}


ARRIVALS = ((1, 1, 1), (1, 1, 2), (1, 2, 2), (1, 2, 3), (2, 2, 2), (1, 1, 3), (1, 3, 4))  # for three slots


def aimed(rng: random.Random, b: Bounds, bs: int) -> Workload:
    """A feasible workload at block size `bs` shaped to crowd the cache: every slot, arrivals close together
    (some late, to queue behind), a cache of the largest peak or one block more. Half are long and eos-free
    (every request runs to b.max_tokens, so decodes cross block boundaries while others hold blocks: several
    victims in one step, many preemptions in one run); half draw eos often (several finishes in one step)."""
    while True:
        long = rng.random() < 0.5
        arrivals = rng.choice(ARRIVALS) if b.slots == 3 else [rng.randint(1, 3) for _ in range(b.slots)]
        names = rng.sample(range(10), b.slots)  # ids whose sorted order is not the arrival order
        reqs = [Request(f"s{k}", rng.randint(1, b.prompt_len),
                        b.max_tokens if long else rng.randint(1, b.max_tokens), a)
                for k, a in zip(names, sorted(arrivals), strict=True)]
        peak = tightest_num_blocks(bs, reqs)
        if peak > b.num_blocks:
            continue
        budget = rng.choice((b.budget, max(1, b.budget - 3))) if long else rng.randint(1, b.budget)
        config = Config(min(b.num_blocks, peak + rng.choice((0, 0, 1))), bs, b.max_num_seqs, budget, EOS, b.policy)
        eos = {r.seq_id: [] if long else [k for k in range(r.max_tokens) if rng.random() < 0.3] for r in reqs}
        return make_workload(config, reqs, eos_at=eos)


def top_up(seed: int, b: Bounds, quotas: Quotas) -> Iterator[Workload]:
    """Workloads for the cells still short, block size by block size (the caller counts each in `quotas`);
    ATTEMPTS candidates per block size at most, so a cell the spec cannot reach leaves the quota short."""
    for bs in quotas.block_sizes:
        rng = random.Random(f"{seed}-{b.policy}-{bs}")
        for _ in range(ATTEMPTS):
            if not any(size in (bs, 0) for _, size in quotas.short()):
                break
            w = aimed(rng, b, bs)
            if quotas.fills(run(spec.rules, w, b.steps)):
                yield w


def new_quotas(b: Bounds) -> Quotas:
    """Empty quotas for a stream within `b`: every kind of its policy at block sizes 1..b.block_size."""
    return Quotas(kinds_for(b.policy or DEFAULT_POLICY), tuple(range(1, b.block_size + 1)))
