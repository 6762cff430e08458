"""The card's block strips: which sequence holds which KV block, after each call.

The rules count blocks (``num_blocks``, ``blocks_used``) but never place them. The
card draws them placed (``a1a2a2``, then ``a1a1·`` once a2 is preempted and a1
grows), and its pictures follow one allocator: a freed block goes back to the
pool, and a sequence that grows takes the lowest free blocks. ``spec_strips``
replays that allocator over the spec's own decisions (its events, in order), so
the strip is a picture of the spec, never a second model of it; ``placed``
replays it over any sequence of per-sequence block counts, for a submission's
white-box snapshots.
"""

from __future__ import annotations

import heapq
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass

from spec.model import State
from spec.trace import Trace

FREE = "·"
Strip = tuple[str | None, ...]  # block index -> the seq_id holding it, None when free


class _Every:
    """Every step: what spec_strips and placed draw unless told which."""

    def __contains__(self, step: object) -> bool:
        return True


EVERY: Container[int] = _Every()


@dataclass(frozen=True, slots=True)
class StepStrips:
    """The strips of one step: after schedule() and after update()."""

    step: int
    after_schedule: Strip
    after_update: Strip


MAX_DRAWN = 4096  # caches with more blocks are not drawn: such a strip is unreadable, and placing it costs time
UNDRAWN: Strip = ()  # the strip of a cache too large to draw


class Blocks:
    """A first-fit pool of `size` blocks, as the card draws it (the free blocks in a heap, lowest first)."""

    def __init__(self, size: int) -> None:
        self.owner: list[str | None] = [None] * size
        self.free = list(range(size))  # a heap: already ordered
        self.held: dict[str, list[int]] = {}

    def count(self, seq_id: str) -> int:
        return len(self.held.get(seq_id, ()))

    def resize(self, seq_id: str, total: int) -> None:
        """Shrink seq_id to `total` blocks (its last ones go back) or grow it with the lowest free ones."""
        mine = self.held.setdefault(seq_id, [])
        while len(mine) > total:
            block = mine.pop()
            self.owner[block] = None
            heapq.heappush(self.free, block)
        if total - len(mine) > len(self.free):
            raise ValueError(f"{seq_id} holds {total} blocks but only {len(mine) + len(self.free)} fit in a cache of "
                             f"{len(self.owner)}: the counts overrun the cache")
        while len(mine) < total:
            block = heapq.heappop(self.free)
            self.owner[block] = seq_id
            mine.append(block)
        if not mine:
            del self.held[seq_id]

    def strip(self) -> Strip:
        return tuple(self.owner)


def spec_strips(trace: Trace, keep: Container[int] = EVERY) -> tuple[StepStrips, ...]:
    """Replay the card's allocator over the spec's decisions, in the order the spec made them (UNDRAWN strips
    for a cache of more than MAX_DRAWN blocks). Only the steps in `keep` are drawn (the others' strips are
    empty): a page of a long run shows a few of its steps, and a strip of every step held them all at once."""
    if trace.workload.config.num_blocks > MAX_DRAWN:
        return tuple(StepStrips(step.step, UNDRAWN, UNDRAWN) for step in trace.steps)
    blocks = Blocks(trace.workload.config.num_blocks)
    running: list[str] = []
    out = []
    for step in trace.steps:
        for e in step.events:
            if e.rule.startswith("U."):
                break
            if e.rule in ("P1.preempt", "P1.skip_self"):  # the victim is always running[-1]
                blocks.resize(running.pop(), 0)
            elif e.rule in ("P1", "P2") and e.seq_id is not None:
                seq = step.after_schedule.find(e.seq_id)
                assert seq is not None, f"step {step.step}: {e.seq_id} scheduled but not in the state"
                blocks.resize(e.seq_id, seq.num_blocks)
                if e.rule == "P2":
                    running.append(e.seq_id)
        after_schedule = blocks.strip() if step.step in keep else ()
        _agree(blocks, step.after_schedule, step.step, "schedule")
        for seq_id in step.finished:  # U.finish: the blocks go back
            blocks.resize(seq_id, 0)
            running.remove(seq_id)
        _agree(blocks, step.after_update, step.step, "update")
        out.append(StepStrips(step.step, after_schedule, blocks.strip()) if step.step in keep else
                   StepStrips(step.step, (), ()))
    return tuple(out)


def _agree(blocks: Blocks, state: State, step: int, call: str) -> None:
    """The placed strip holds exactly the spec's counts; anything else is a bug in this module."""
    for seq in state.seqs():
        if blocks.count(seq.seq_id) != seq.num_blocks:
            raise AssertionError(f"step {step}, after {call}(): the strip gives {seq.seq_id} "
                                 f"{blocks.count(seq.seq_id)} blocks, the spec {seq.num_blocks}")


def placed(snapshots: Iterable[tuple[Sequence[str], Mapping[str, int]]], num_blocks: int,
           keep: Container[int] = EVERY) -> list[Strip | None]:
    """Place a submission's block counts, one (running order, seq_id -> num_blocks) pair per call.

    A snapshot does not say in which order a step grew and freed, so the order is
    the spec's wherever it can be told: in running order, a growth that fits in the
    free blocks happens first (phase 1 grows before it preempts), then counts that
    drop give their blocks back, then the growths that had to wait for them. A
    conforming submission's strips then equal the spec's. A pair whose counts
    overrun the cache has no picture (None), and placing goes on from the next pair. Only the steps in `keep`
    (numbered from 1) are drawn; the others' strips are empty.
    """
    if num_blocks > MAX_DRAWN:
        return [UNDRAWN for _ in snapshots]
    blocks = Blocks(num_blocks)
    out: list[Strip | None] = []
    for step, (running, counts) in enumerate(snapshots, start=1):
        order = [*running, *sorted(set(counts) - set(running))]
        waiting_for_room = []
        for seq_id in order:
            want = counts.get(seq_id, 0)
            if want > blocks.count(seq_id):
                if want - blocks.count(seq_id) <= len(blocks.free):
                    blocks.resize(seq_id, want)
                else:
                    waiting_for_room.append(seq_id)
        for seq_id in sorted(blocks.held):
            if counts.get(seq_id, 0) < blocks.count(seq_id):
                blocks.resize(seq_id, counts.get(seq_id, 0))
        try:
            for seq_id in waiting_for_room:
                blocks.resize(seq_id, counts[seq_id])
        except ValueError:
            out.append(None)
            blocks = Blocks(num_blocks)
            continue
        out.append(blocks.strip() if step in keep else ())
    return out


def text(strip: Strip | None) -> str:
    """The card's notation: seq ids side by side, a dot for a free block."""
    if strip is None:
        return "(more blocks held than the cache has)"
    if strip == UNDRAWN:
        return f"(not drawn: more than {MAX_DRAWN} blocks)"
    return "".join(FREE if who is None else who for who in strip)
