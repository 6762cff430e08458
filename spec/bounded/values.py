"""The values the bounded rows never vary: sizes past block_size 4, and eos.

The encoding, the validation and the model check stop at block_size 4 and a few tokens, and draw every token
as eos = 0 or 100 * slot + d. So spec/rules.py can be wrong where they never look, and pass them all: a shift
for power-of-two block sizes of 16 and more, a clamp to an int32, a float division that rounds past 2**53, an
eos of None read as 0, an eos compared by identity. Two rows look there.

The arithmetic row runs each helper on both sides of every power-of-two threshold up to 2**64 and checks it
against its definition, stated without the helper's own formula:

- blocks_for(bs, t) is the least k with k * bs >= t;
- peak_blocks(bs, p, m) is the least k with k * bs >= p + m - 1 (the last token is never computed);
- chunk(seq, budget) is min(the sequence's tokens not yet computed, budget).

The eos row runs the validation's workloads with eos and the tokens taken from values real code treats
specially (None, 0, -1, 2**31 - 1, 2**53 + 1, 2**64 + 1): eos is only a value a token may equal, so runs that
differ only in which value plays eos, or in tokens that never equal it (the ones just below it among them,
which a float cannot tell from it past 2**53), must schedule and finish alike.
"""

from __future__ import annotations

import time
import types
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import spec.rules
from spec.bounded import execute, validate
from spec.model import Seq
from spec.trace import Workload

POWERS = (1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 53, 63, 64)  # exponents: the thresholds of bytes, int32, float, int64
BLOCK_SIZES = tuple(sorted({*range(1, 65), *(2**k + d for k in POWERS for d in (-1, 0, 1) if 2**k + d >= 1)}))
MULTIPLES = (0, 1, 2, 3, 7, 8, 9, 2**16, 2**31, 2**53)  # of the block size, each also -1 and +1 token
EDGES = tuple(sorted({2**k + d for k in (*POWERS, 65) for d in (-1, 0, 1)}))  # token counts near a power of two


def least_blocks(block_size: int, tokens: int) -> int:
    """The least k >= 0 with k * block_size >= tokens, by bisection (not by the helper's ceiling division)."""
    lo, hi = 0, max(tokens, 0)  # block_size >= 1: tokens blocks always hold tokens tokens
    while lo < hi:
        mid = (lo + hi) // 2
        if mid * block_size >= tokens:
            hi = mid
        else:
            lo = mid + 1
    return lo


def token_counts(block_size: int) -> Iterator[int]:
    """Counts on both sides of the block boundaries and of the powers of two, from 0 to past 2**64."""
    seen: set[int] = set()
    for t in (*(m * block_size + d for m in MULTIPLES for d in (-1, 0, 1)), *EDGES):
        if t >= 0 and t not in seen:
            seen.add(t)
            yield t


def differences(rules: types.ModuleType = spec.rules) -> Iterator[str]:
    """Each place a helper of `rules` differs from its definition, with the call and both values."""
    for bs in BLOCK_SIZES:
        for t in token_counts(bs):
            want = least_blocks(bs, t)
            got = rules.blocks_for(bs, t)
            if type(got) is not int or got != want:
                yield f"blocks_for({bs}, {t}) = {got!r}; the least k with k * {bs} >= {t} is {want}"
            if t >= 1:  # requests of t tokens in prompt_len, in max_tokens, and one more in max_tokens
                for p, m in ((t, 1), (1, t), (t, 2)):
                    peak = rules.peak_blocks(bs, p, m)
                    if type(peak) is not int or peak != least_blocks(bs, p + m - 1):
                        yield (f"peak_blocks({bs}, {p}, {m}) = {peak!r}; the least k with k * {bs} >= {p + m - 1} "
                               f"is {least_blocks(bs, p + m - 1)}")
    for t in (t for t in EDGES if t >= 1):
        for computed in (0, t // 2, t - 1):
            seq = replace(Seq("s", t, 1), num_computed=computed)
            for budget in EDGES:
                got = rules.chunk(seq, budget)
                if type(got) is not int or got != min(t - computed, budget):
                    yield (f"chunk(a sequence of {t} tokens with {computed} computed, budget {budget}) = {got!r}; "
                           f"expected {min(t - computed, budget)}")


def arithmetic_row(rules: types.ModuleType = spec.rules) -> dict[str, object]:
    """The row of prove: agree when no helper differs from its definition at any of the sizes."""
    t = time.perf_counter()
    first = next(differences(rules), None)
    return {"claim": "blocks_for, peak_blocks, chunk == their definitions", "kind": "arithmetic",
            "block_sizes": f"1..64 and 2^k-1, 2^k, 2^k+1 for k in {list(POWERS)}",
            "tokens": "both sides of every block boundary and of 2^k, to 2^65+1",
            "verdict": "disagree" if first else "agree", "first_difference": first,
            "seconds": round(time.perf_counter() - t, 2)}


EOS_VALUES = (0, -1, 2**31 - 1, 2**53 + 1, 2**64 + 1)  # eos values real code mishandles (falsy, sign, int32, float,
# identity past the small-int cache)
NEVER = -(2**70)  # an eos no token of these runs equals
EOS_WORKLOADS = 40  # of the validation's stream


@dataclass(slots=True)
class Tokens:
    """The validation's sampler (execute.Draws) with its values chosen: draw d of a sequence is `eos` where the
    workload puts an eos, else base + d; each token a new int object, as a model's tokens are."""

    eos: int | None
    base: int
    eos_at: dict[str, tuple[int, ...]]
    stride: int = 1  # draw d is base + stride * d
    counts: dict[str, int] = field(default_factory=dict)

    def __call__(self, seq_id: str, output: tuple[int, ...]) -> int:
        d = self.counts.get(seq_id, 0)
        self.counts[seq_id] = d + 1
        token = self.eos if d in self.eos_at.get(seq_id, ()) else self.base + self.stride * d
        return int(str(token))  # equal, never identical (a large int is a new object every time)


def behaviour(rules: types.ModuleType, w: Workload, eos: int | None, base: int,
              eos_at: dict[str, tuple[int, ...]], stride: int = 1) -> list[tuple[object, ...]]:
    """What a run shows apart from token values: each step's batch, decisions, finished list, preemptions and
    every sequence's status and output length."""
    run = execute.run(rules, replace(w, config=replace(w.config, eos=eos)), validate.STREAM.steps,
                      Tokens(eos, base, eos_at, stride))  # type: ignore[arg-type]
    return [(s.batch, tuple((e.rule, e.seq_id) for e in s.events), s.finished, s.error,
             s.after_update.num_preemptions,
             tuple(sorted((q.seq_id, q.status, len(q.output)) for q in s.after_update.seqs()))) for s in run]


def eos_differences(rules: types.ModuleType = spec.rules) -> Iterator[str]:
    """Each workload on which two runs differing only in eos's value (or in tokens that never equal it) differ."""
    for w in validate.stream(validate.SEED, EOS_WORKLOADS):
        eos_at = dict(w.sample.eos_at)
        none = behaviour(rules, w, None, 0, {})  # eos None: the tokens 0, 1, 2, ... end nothing
        if none != behaviour(rules, w, NEVER, 0, {}):
            yield (f"eos None and eos {NEVER} (no token equals either) run differently on "
                   f"{replace(w.config, eos=None)} "
                   f"{w.requests}: a token 0 ended a sequence although eos is None?")
        reference = behaviour(rules, w, NEVER, 2**80, eos_at)
        for value in EOS_VALUES:
            below = behaviour(rules, w, NEVER, value - 1, {}, -1)  # tokens value - 1, value - 2, ...: next to eos
            if behaviour(rules, w, value, value - 1, {}, -1) != below:
                yield (f"eos {value} ended a sequence on a token below it ({value - 1}, {value - 2}, ...) on "
                       f"{replace(w.config, eos=value)} {w.requests}: eos compared as a float, or by order?")
            if behaviour(rules, w, value, 2**80, eos_at) != reference:
                yield (f"eos {value} runs differently from eos {NEVER} at the same positions on "
                       f"{replace(w.config, eos=value)} "
                       f"{w.requests} eos at {eos_at}: eos compared by identity, or as a number?")


def eos_row(rules: types.ModuleType = spec.rules) -> dict[str, object]:
    """The row of prove: agree when no two runs differing only in eos's value differ."""
    t = time.perf_counter()
    first = next(eos_differences(rules), None)
    return {"claim": "eos is a value, whichever", "kind": "eos", "workloads": EOS_WORKLOADS,
            "eos_values": ["None", *(str(v) for v in EOS_VALUES)],
            "verdict": "disagree" if first else "agree", "first_difference": first,
            "seconds": round(time.perf_counter() - t, 2)}
