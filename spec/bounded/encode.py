"""The transition system of spec/rules.py as z3 constraints: N sequence slots, K steps, every input symbolic.

A state is one vector per slot (status, num_computed, num_blocks, output length,
tokens drawn, the pending batch) plus the queues as a list of slot ids: the first
r entries are running in order, the next w waiting in order. Phase 1's index loop
with its preemption retries and phase 2's admission loop are unrolled N times
each; every loop that could need one more round is recorded in ``unwind`` so a
check can prove the unrolling was enough. Slots are requests in arrival order.

The encoding is written by hand, so it is checked against spec/rules.py itself
(``spec.bounded.validate``): with every input fixed, its trace must equal the
spec's, field by field, on a stream of workloads heavy in preemption.

Tokens: the d-th token drawn for slot s is eos when ``eos[s][d]``, else base + d
(``spec.bounded.execute.Draws``). The output is the last ``out`` tokens drawn, so
two outputs of a slot are equal exactly when ``out`` and ``drawn`` are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, TypeAlias

import z3

from spec.model import DEFAULT_POLICY, Policy

UNARRIVED, WAITING, RUNNING, FINISHED = 0, 1, 2, 3
Term: TypeAlias = Any  # a z3.ArithRef (an Int, or a signed bit-vector in bit-vector mode); z3 has no types

# The sort of every number: fixed-width signed bit-vectors for bounded checks (bit-blasted, much faster),
# unbounded Ints for induction. Switch with `arithmetic(...)` around building a run and its claims.
_MODE: list[int] = [0]  # bit width; 0 means Int (the default: faster here than bit-vectors)


@contextmanager
def arithmetic(width: int) -> Iterator[None]:
    """Build terms as `width`-bit signed bit-vectors (width 0: unbounded integers)."""
    saved = _MODE[0]
    _MODE[0] = width
    try:
        yield
    finally:
        _MODE[0] = saved


def num(v: int) -> Term:
    return z3.IntVal(v) if not _MODE[0] else z3.BitVecVal(v, _MODE[0])


def var(name: str) -> Term:
    return z3.Int(name) if not _MODE[0] else z3.BitVec(name, _MODE[0])


def one_if(c: z3.BoolRef) -> Term:
    return z3.If(c, num(1), num(0))


def total(terms: Iterable[Term]) -> Term:
    out = num(0)
    for t in terms:
        out = out + t
    return out


@dataclass(frozen=True, slots=True)
class Bounds:
    """The scope of a check: slots (requests), steps, and the largest value of each input."""

    slots: int = 3
    steps: int = 10
    num_blocks: int = 8
    block_size: int = 4
    budget: int = 8  # max_num_batched_tokens
    max_num_seqs: int = 3
    prompt_len: int = 8
    max_tokens: int = 4
    arrival: int = 0  # latest arrival step; 0 means `steps`
    policy: Policy = DEFAULT_POLICY  # the rules encoded (spec/model.py POLICIES); not symbolic: one run, one policy

    @property
    def last_arrival(self) -> int:
        return self.arrival or self.steps

    def to_json(self) -> dict[str, object]:
        """The bounds as a results row states them, the policy as written."""
        return {f: str(v) if isinstance(v := getattr(self, f), Policy) else v for f in Bounds.__slots__}


@dataclass(frozen=True, slots=True)
class Inputs:
    """Every input of a run: the config, the requests and which sampled tokens are eos."""

    num_blocks: Term
    block_size: Term
    max_num_seqs: Term
    budget: Term
    prompt_len: tuple[Term, ...]
    max_tokens: tuple[Term, ...]
    arrival: tuple[Term, ...]
    eos: tuple[tuple[z3.BoolRef, ...], ...]  # eos[s][d]: the d-th token drawn for slot s is eos

    @staticmethod
    def fresh(bounds: Bounds, tag: str = "") -> Inputs:
        n = bounds.slots
        return Inputs(var(f"num_blocks{tag}"), var(f"block_size{tag}"), var(f"max_num_seqs{tag}"),
                      var(f"budget{tag}"), tuple(var(f"p{s}{tag}") for s in range(n)),
                      tuple(var(f"m{s}{tag}") for s in range(n)), tuple(var(f"a{s}{tag}") for s in range(n)),
                      tuple(tuple(z3.Bool(f"eos{s}_{k}{tag}") for k in range(bounds.max_tokens + 2))
                            for s in range(n)))

    def domain(self, b: Bounds) -> list[z3.BoolRef]:
        """The input bounds, arrival order by slot, no eos draw past max_tokens, each request feasible alone."""
        out = [z3.And(v >= 1, v <= hi) for v, hi in ((self.num_blocks, b.num_blocks), (self.block_size, b.block_size),
                                                       (self.max_num_seqs, b.max_num_seqs), (self.budget, b.budget))]
        for s in range(b.slots):
            out += [z3.And(self.prompt_len[s] >= 1, self.prompt_len[s] <= b.prompt_len),
                    z3.And(self.max_tokens[s] >= 1, self.max_tokens[s] <= b.max_tokens),
                    z3.And(self.arrival[s] >= 1, self.arrival[s] <= b.last_arrival),
                    blocks_for(self.block_size, self.prompt_len[s] + self.max_tokens[s] - 1, b) <= self.num_blocks]
            out += [z3.Implies(self.max_tokens[s] <= k, z3.Not(e)) for k, e in enumerate(self.eos[s])]
            if s:
                out.append(self.arrival[s - 1] <= self.arrival[s])
        return out


@dataclass(frozen=True, slots=True)
class Snap:
    """One state of the run; `sched`, `times` and `order` describe the pending batch (zero after update)."""

    status: tuple[Term, ...]
    computed: tuple[Term, ...]
    blocks: tuple[Term, ...]
    out: tuple[Term, ...]  # len(output)
    drawn: tuple[Term, ...]  # tokens drawn so far (sample calls); the output is the last `out` of them
    sched: tuple[Term, ...]  # n of this slot in the batch, 0 if absent
    times: tuple[Term, ...]  # how often the slot appears in the batch
    order: tuple[Term, ...]  # its position in the batch
    queue: tuple[Term, ...]  # slot ids: running then waiting; `slots` past the end
    r: Term  # len(running)
    w: Term  # len(waiting)
    used: Term  # blocks_used
    preemptions: Term
    size: Term  # len(batch)


def blocks_for(bs: Term, t: Term, b: Bounds) -> Term:
    """ceil(t / bs) for t >= 0, without division.

    Bit-vector mode: the number of j with j * bs < t, for j below the largest t a run
    within `b` can reach (sums of comparisons bit-blast far better than a divider).
    Integer mode: a case split over the block sizes, each a division by a constant.
    """
    if _MODE[0]:
        cap = b.prompt_len + b.max_tokens + 2
        return total(one_if(t > j * bs) for j in range(cap))
    out: Term = (t + b.block_size - 1) / b.block_size
    for k in range(b.block_size - 1, 0, -1):
        out = z3.If(bs == k, (t + k - 1) / k, out)
    return out


def pick(items: tuple[Term, ...], idx: Term | int, default: Term | None = None) -> Term:
    """items[idx] for a symbolic index; `default` (or the last item) when out of range."""
    if isinstance(idx, int):
        return items[idx]
    out = items[-1] if default is None else default
    for j in range(len(items) - 1 - (default is None), -1, -1):
        out = z3.If(idx == j, items[j], out)
    return out


def put(items: tuple[Term, ...], idx: Term, value: Term) -> tuple[Term, ...]:
    return tuple(z3.If(idx == j, value, v) for j, v in enumerate(items))


def move(q: tuple[Term, ...], src: Term, dst: Term, sentinel: int) -> tuple[Term, ...]:
    """The list with the entry at `src` moved to position `dst`, the others keeping their order."""
    ext = q + (num(sentinel),)
    x = pick(q, src)
    out = []
    for j in range(len(q)):
        left = z3.If(j < dst, q[j], z3.If(j == dst, x, z3.If(j <= src, q[j - 1] if j else x, q[j])))
        right = z3.If(j < src, q[j], z3.If(j < dst, ext[j + 1], z3.If(j == dst, x, q[j])))
        out.append(z3.If(dst <= src, left, right))
    return tuple(out)


def merge(c: z3.BoolRef, a: Snap, b: Snap) -> Snap:
    """a where c holds, else b."""
    def one(x: Any, y: Any) -> object:
        if isinstance(x, tuple):
            return tuple(z3.If(c, u, v) for u, v in zip(x, y, strict=True))
        return z3.If(c, x, y)
    return Snap(*(one(getattr(a, f.name), getattr(b, f.name)) for f in fields(Snap)))  # type: ignore[arg-type]
