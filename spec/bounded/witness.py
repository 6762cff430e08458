"""Between z3 models and the project's data: a model becomes a Workload, a Workload becomes fixed inputs.

Slot s is request ``r{s}``; a slot that arrives after the last step of the
check never takes part, so it is left out of the workload. The k-th token drawn
for ``r{s}`` is 100 * (s + 1) + k, or the eos token 0 where the model says so; the
workload's eos positions are read as draw indices (``spec.bounded.execute.Draws``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import z3

from spec.bounded.encode import FINISHED, RUNNING, UNARRIVED, WAITING, Bounds, Inputs, Snap  # noqa: F401  (re-exported for readers)
from spec.bounded.evaluate import Values
from spec.model import Config, State, Status
from spec.trace import Request, Workload, make_workload

EOS = 0
STATUS = {Status.WAITING: WAITING, Status.RUNNING: RUNNING, Status.FINISHED: FINISHED}


def val(m: z3.ModelRef | Values, t: z3.ExprRef) -> int:
    if isinstance(m, Values):  # evaluated without a solver: the value itself
        return m.values[t.get_id()]
    v = m.eval(t, model_completion=True)
    if z3.is_bool(v):
        return bool(z3.is_true(v))
    return int(v.as_signed_long() if z3.is_bv(v) else v.as_long())


def to_workload(m: z3.ModelRef, x: Inputs, bounds: Bounds, num_blocks: z3.ArithRef | None = None,
                name: str = "", tags: tuple[str, ...] = ()) -> Workload:
    """The workload a model describes (requests arriving within the steps checked)."""
    config = Config(val(m, num_blocks if num_blocks is not None else x.num_blocks), val(m, x.block_size),
                    val(m, x.max_num_seqs), val(m, x.budget), EOS, bounds.policy)
    requests, eos_at = [], {}
    for s in range(bounds.slots):
        arrival = val(m, x.arrival[s])
        if arrival > bounds.steps:
            continue
        r = Request(f"r{s}", val(m, x.prompt_len[s]), val(m, x.max_tokens[s]), arrival)
        requests.append(r)
        eos_at[r.seq_id] = [k for k, e in enumerate(x.eos[s]) if k < r.max_tokens and val(m, e)]
    return make_workload(config, requests, {f"r{s}": 100 * (s + 1) for s in range(bounds.slots)}, eos_at,
                         name, tags)


def pinned(x: Inputs, w: Workload, bounds: Bounds) -> list[tuple[z3.ExprRef, int | bool]]:
    """Every input with the workload's value (requests r0, r1, ... in slot order), in an order fixed by `bounds`
    alone, so a caller may name the inputs once."""
    c = w.config
    out: list[tuple[z3.ExprRef, int | bool]] = [(x.num_blocks, c.num_blocks), (x.block_size, c.block_size),
                                                (x.max_num_seqs, c.max_num_seqs), (x.budget, c.max_num_batched_tokens)]
    eos_at = dict(w.sample.eos_at)
    for s in range(bounds.slots):
        if s < len(w.requests):
            r = w.requests[s]
            out += [(x.prompt_len[s], r.prompt_len), (x.max_tokens[s], r.max_tokens), (x.arrival[s], r.arrival)]
            out += [(e, k in eos_at.get(r.seq_id, ())) for k, e in enumerate(x.eos[s])]
        else:  # an absent request: arrives after the horizon
            out += [(x.prompt_len[s], 1), (x.max_tokens[s], 1), (x.arrival[s], bounds.steps + 1)]
            out += [(e, False) for e in x.eos[s]]
    return out


def pin(x: Inputs, w: Workload, bounds: Bounds) -> list[z3.BoolRef]:
    """Constraints fixing every input to the workload's (requests r0, r1, ... in slot order)."""
    return [t == v for t, v in pinned(x, w, bounds)]


def tokens(m: z3.ModelRef, x: Inputs, slot: int, first: int, last: int) -> list[int]:
    """Draws first..last-1 of a slot as tokens: eos, or 100 * (slot + 1) + draw (spec.bounded.execute.Draws)."""
    return [EOS if d < len(x.eos[slot]) and val(m, x.eos[slot][d]) else 100 * (slot + 1) + d
            for d in range(first, last)]


def read(m: z3.ModelRef, s: Snap, bounds: Bounds, x: Inputs) -> dict[str, object]:
    """A state as plain values, in the shape of spec.trace.snapshot_to_json plus the batch.

    A slot's output is the last len(output) of its drawn tokens."""
    n = bounds.slots
    r, w = val(m, s.r), val(m, s.w)
    queue = [val(m, q) for q in s.queue]
    names = {UNARRIVED: "UNARRIVED", WAITING: "WAITING", RUNNING: "RUNNING", FINISHED: "FINISHED"}
    seqs = {f"r{j}": {"num_computed": val(m, s.computed[j]), "num_blocks": val(m, s.blocks[j]),
                      "output": tokens(m, x, j, val(m, s.drawn[j]) - val(m, s.out[j]), val(m, s.drawn[j])),
                      "drawn": val(m, s.drawn[j]), "status": names.get(val(m, s.status[j]), "?")}
            for j in range(n)}
    batch = sorted((val(m, s.order[j]), f"r{j}", val(m, s.sched[j])) for j in range(n) if val(m, s.times[j]) > 0)
    return {"running": [f"r{q}" for q in queue[:r]], "waiting": [f"r{q}" for q in queue[r:r + w]],
            "blocks_used": val(m, s.used), "num_preemptions": val(m, s.preemptions), "seqs": seqs,
            "batch": [(i, k) for _, i, k in batch]}


@dataclass(frozen=True, slots=True)
class Slots:
    """Which encoding slot each sequence of a workload is (arrival order), and how often each drew a token."""

    index: Mapping[str, int]
    drawn: Mapping[str, int]


def concrete(state: State, slots: Slots, n: int) -> Snap:
    """A spec state as the encoding's Snap of plain ints (the batch is the state's pending one, if any)."""
    status, computed, blocks, out, drawn = [UNARRIVED] * n, [0] * n, [0] * n, [0] * n, [0] * n
    sched, times, order = [0] * n, [0] * n, [0] * n
    for q in state.seqs():
        j = slots.index[q.seq_id]
        status[j], computed[j], blocks[j] = STATUS[q.status], q.num_computed, q.num_blocks
        out[j], drawn[j] = len(q.output), slots.drawn.get(q.seq_id, 0)
    size = 0
    for seq_id, n_tokens in state.pending or ():
        j = slots.index[seq_id]
        if not times[j]:
            order[j], size = size, size + 1
        sched[j], times[j] = n_tokens, times[j] + 1
    queue = [slots.index[q.seq_id] for q in state.running + state.waiting][:n]
    queue += [n] * (n - len(queue))
    return Snap(tuple(status), tuple(computed), tuple(blocks), tuple(out), tuple(drawn), tuple(sched), tuple(times),
                tuple(order), tuple(queue), len(state.running), len(state.waiting), state.blocks_used,
                state.num_preemptions, size)


def snap_pairs(free: Snap, values: Snap) -> list[tuple[z3.ExprRef, int]]:
    """Each term of a Snap of free constants with its value, field by field (an order fixed by the slots)."""
    out: list[tuple[z3.ExprRef, int]] = []
    for f in Snap.__slots__:
        a, v = getattr(free, f), getattr(values, f)
        out += list(zip(a, v, strict=True)) if isinstance(a, tuple) else [(a, v)]
    return out
