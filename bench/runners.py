"""Run one workload on floor, impl and spec: a recording pass, timed passes, and a tracemalloc pass.

Timed passes measure each step (its add() calls, schedule() and update()) with
time.perf_counter_ns; setup (building sequences, the floor's plan, the spec's
starting state) is never timed. The spec is timed on a window of steps that
starts from the state impl reached, and impl's time on the same window is kept
for the ratio.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from dataclasses import dataclass, field
from typing import Any

from bench.floor import FloorScheduler, Plan
from bench.workloads import BenchWorkload, sample, spec_sample
from impl.scheduler import Scheduler, Sequence, SequenceStatus
from spec.loop import Steps
from spec.model import Config, Seq, State, Status
from spec.rules import add as spec_add
from spec.rules import schedule as spec_schedule
from spec.rules import update as spec_update


@dataclass
class Recording:
    """What an untimed impl run did: the floor's plan and the counts the report needs."""

    steps: int
    seqs: list[Sequence]  # in request order; reset and reused by every floor run
    plan: Plan
    scheduled: list[int]  # sequences scheduled at each step
    preemptions: int
    steps_with_preemption: int
    spec_batches: list[list[tuple[str, int]]] = field(default_factory=list)  # impl's batches in the spec window


def arrivals_by_step(w: BenchWorkload, steps: int, seqs: list[Sequence]) -> list[list[Sequence]]:
    out: list[list[Sequence]] = [[] for _ in range(steps)]
    for (_, _, _, arrival), seq in zip(w.requests, seqs, strict=True):
        if arrival <= steps:
            out[arrival - 1].append(seq)
    return out


def new_impl(w: BenchWorkload) -> tuple[Scheduler, list[Sequence]]:
    return Scheduler(**w.config(), sample_fn=sample), [Sequence(i, p, m) for i, p, m, _ in w.requests]


def record(w: BenchWorkload) -> Recording:
    """Run impl once, untimed, and note who ran at each step and who was preempted."""
    sched, seqs = new_impl(w)
    arrival = {q.seq_id: a for q, (_, _, _, a) in zip(seqs, w.requests, strict=True)}
    plan: Plan = []
    scheduled: list[int] = []
    spec_batches = []
    steps_with_preemption = 0
    by_id = {q.seq_id: q for q in seqs}
    limit = w.steps if w.steps is not None else sum(p + m for _, p, m, _ in w.requests) + max(arrival.values())
    run = Steps(seqs, lambda q: arrival[q.seq_id], lambda q: q.seq_id, limit)
    if w.steps is not None:  # a fixed number of steps: the run does not stop when everything has finished
        run.unfinished.add("")
    step = 0
    for step, arrivals in run:
        for seq in arrivals:
            sched.add(seq)
        before_running = list(sched.running)
        before = sched.num_preemptions
        batch = sched.schedule()
        if sched.num_preemptions > before:
            steps_with_preemption += 1
        # a running sequence has num_computed >= 1 until it is preempted
        resets = [q for q in before_running if q.num_computed == 0]
        plan.append(([by_id[i] for i in batch], resets))
        scheduled.append(len(batch))
        if w.spec_start < step <= w.spec_start + w.spec_steps:
            spec_batches.append(list(batch.items()))
        run.finished(q.seq_id for q in sched.update())
    if w.steps is None:
        assert len(sched.finished) == len(w.requests), "the recording run did not finish every request"
    return Recording(step, seqs, plan, scheduled, sched.num_preemptions, steps_with_preemption, spec_batches)


def reset(seqs: list[Sequence]) -> None:
    """Make the recorded sequences new again for the next floor run."""
    for q in seqs:
        q.output = []
        q.num_computed = 0
        q.num_blocks = 0
        q.status = SequenceStatus.WAITING


def drive(sched: Any, arrivals: list[list[Sequence]], steps: int, memory: bool = False) -> tuple[list[int], int]:
    """Run `steps` steps; return each step's nanoseconds (its add() calls, schedule() and update()).

    With `memory`, the steps run under tracemalloc and the second result is the peak
    bytes allocated during them (the times are then not meaningful).
    """
    clock = time.perf_counter_ns
    add, schedule, update = sched.add, sched.schedule, sched.update
    times = [0] * steps
    gc.collect()
    if memory:
        tracemalloc.start()
    for step in range(steps):
        start = clock()
        for seq in arrivals[step]:
            add(seq)
        schedule()
        update()
        times[step] = clock() - start
    peak = 0
    if memory:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return times, peak


def new_floor(w: BenchWorkload, rec: Recording) -> FloorScheduler:
    reset(rec.seqs)
    return FloorScheduler(rec.plan, w.max_num_batched_tokens, sample)


def run_pair(w: BenchWorkload, rec: Recording) -> tuple[list[int], list[int]]:
    """Run floor and impl side by side, one step each in turn (alternating who goes first).

    Pairing the steps makes both see the same machine load, so their ratio holds
    on a shared, noisy machine. Returns each one's nanoseconds per step.
    """
    floor = new_floor(w, rec)
    sched, seqs = new_impl(w)
    runs: list[tuple[Any, list[list[Sequence]]]] = [(floor, arrivals_by_step(w, rec.steps, rec.seqs)),
                                                    (sched, arrivals_by_step(w, rec.steps, seqs))]
    times: list[list[int]] = [[0] * rec.steps, [0] * rec.steps]
    clock = time.perf_counter_ns
    gc.collect()
    for step in range(rec.steps):
        for k in ((0, 1) if step % 2 else (1, 0)):
            target, arrivals = runs[k]
            start = clock()
            for seq in arrivals[step]:
                target.add(seq)
            target.schedule()
            target.update()
            times[k][step] = clock() - start
    assert sched.num_preemptions == rec.preemptions
    assert len(floor.finished) == len(sched.finished)
    return times[0], times[1]


def peak_floor(w: BenchWorkload, rec: Recording, steps: int) -> int:
    """Peak bytes the floor allocates in its first `steps` steps (traced, untimed)."""
    return drive(new_floor(w, rec), arrivals_by_step(w, rec.steps, rec.seqs), steps, memory=True)[1]


def peak_impl(w: BenchWorkload, rec: Recording, steps: int) -> int:
    """Peak bytes impl allocates in its first `steps` steps (traced, untimed)."""
    sched, seqs = new_impl(w)
    return drive(sched, arrivals_by_step(w, rec.steps, seqs), steps, memory=True)[1]


def to_spec(sched: Scheduler, w: BenchWorkload) -> State:
    """The spec's State equal to impl's white-box state."""
    def seq(q: Sequence) -> Seq:
        return Seq(q.seq_id, q.prompt_len, q.max_tokens, tuple(q.output), q.num_computed, q.num_blocks,
                   Status[q.status.name])
    config = Config(w.num_blocks, w.block_size, w.max_num_seqs, w.max_num_batched_tokens)
    return State(config, tuple(map(seq, sched.waiting)), tuple(map(seq, sched.running)),
                 tuple(map(seq, sched.finished)), sched.blocks_used, sched.num_preemptions)


def spec_start_state(w: BenchWorkload, rec: Recording) -> tuple[State, list[list[Sequence]]]:
    """Run impl (untimed) to the start of the spec's window; return that state as the spec's, and the arrivals."""
    sched, seqs = new_impl(w)
    arrivals = arrivals_by_step(w, rec.steps, seqs)
    for step in range(w.spec_start):
        for q in arrivals[step]:
            sched.add(q)
        sched.schedule()
        sched.update()
    return to_spec(sched, w), arrivals


def run_spec(w: BenchWorkload, rec: Recording, start: tuple[State, list[list[Sequence]]],
             memory: bool = False) -> tuple[list[int], int]:
    """Time the spec on its window; check its batches against impl's; return (ns per step, peak bytes).

    The start state is immutable, so every run of the window starts from the same one.
    """
    state, arrivals = start
    clock = time.perf_counter_ns
    times = []
    gc.collect()
    if memory:
        tracemalloc.start()
    for k, step in enumerate(range(w.spec_start, w.spec_start + w.spec_steps)):
        t0 = clock()
        for q in arrivals[step]:
            state = spec_add(state, q.seq_id, q.prompt_len, q.max_tokens)
        state, batch = spec_schedule(state)
        state, _ = spec_update(state, spec_sample)
        times.append(clock() - t0)
        if list(batch) != rec.spec_batches[k]:
            raise AssertionError(f"{w.name} step {step + 1}: the spec scheduled {list(batch)[:4]}..., impl "
                                 f"{rec.spec_batches[k][:4]}...; impl and spec disagree")
    peak = tracemalloc.get_traced_memory()[1] if memory else 0
    if memory:
        tracemalloc.stop()
    return times, peak
