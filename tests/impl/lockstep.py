"""Drive the spec and an implementation module in lockstep and report the first difference.

After every add(), schedule() and update() it compares everything a grader can
observe: the batch items in order, the finished ids in order, the sample_fn
calls (seq_id, output so far), and the white-box fields in the JSON shape of
``spec.trace.snapshot_to_json``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from spec.feasible import liveness_bound
from spec.loop import Steps
from spec.model import State
from spec.rules import add, initial_state, schedule, update
from spec.trace import Workload, snapshot_to_json


def impl_snapshot(sched: Any) -> dict[str, object]:
    """The white-box fields of an implementation's Scheduler, shaped like snapshot_to_json."""
    seqs = list(sched.waiting) + list(sched.running) + list(sched.finished)
    return {
        "blocks_used": sched.blocks_used, "num_preemptions": sched.num_preemptions,
        "waiting": [q.seq_id for q in sched.waiting], "running": [q.seq_id for q in sched.running],
        "finished": [q.seq_id for q in sched.finished],
        "seqs": {q.seq_id: {"num_computed": q.num_computed, "num_tokens": q.num_tokens, "num_blocks": q.num_blocks,
                            "status": q.status.name, "output": list(q.output)}
                 for q in sorted(seqs, key=lambda q: q.seq_id)},
    }


def _diff(where: str, got: dict[str, Any], want: dict[str, Any]) -> str | None:
    for key in want:
        if key == "seqs":
            for seq_id in sorted(set(want["seqs"]) | set(got["seqs"])):
                g, w = got["seqs"].get(seq_id), want["seqs"].get(seq_id)
                if g != w:
                    return f"{where}: {seq_id} is {g}, spec {w}"
        elif got[key] != want[key]:
            return f"{where}: {key} is {got[key]!r}, spec {want[key]!r}"
    return None


def lockstep(workload: Workload, module: ModuleType) -> tuple[str | None, set[str]]:
    """Run `workload` on the spec and on `module`; return (first difference or None, features exercised)."""
    config = workload.config
    rule = workload.sample
    spec_calls: list[tuple[str, tuple[int, ...]]] = []
    impl_calls: list[tuple[str, tuple[int, ...]]] = []

    def spec_sample(seq_id: str, output: tuple[int, ...]) -> int:
        spec_calls.append((seq_id, output))
        return rule(seq_id, output)

    def impl_sample(seq: Any) -> int:
        output = tuple(seq.output)
        impl_calls.append((seq.seq_id, output))
        return rule(seq.seq_id, output)

    sched = module.Scheduler(num_blocks=config.num_blocks, block_size=config.block_size,
                             max_num_seqs=config.max_num_seqs, max_num_batched_tokens=config.max_num_batched_tokens,
                             sample_fn=impl_sample, eos=config.eos)
    state: State = initial_state(config)
    objects: dict[str, Any] = {}
    features: set[str] = set()
    bound = liveness_bound(workload.requests)
    steps = Steps(workload.requests, lambda r: r.arrival, lambda r: r.seq_id, bound)

    def compare(where: str) -> str | None:
        for q in list(sched.waiting) + list(sched.running) + list(sched.finished):
            if objects.get(q.seq_id) is not q:
                return f"{where}: the scheduler holds an object for {q.seq_id!r} that add() was not given"
        return _diff(where, impl_snapshot(sched), snapshot_to_json(state))

    for step, arrivals in steps:
        for r in arrivals:
            if step > 1:
                features.add("arrival between steps")
            state = add(state, r.seq_id, r.prompt_len, r.max_tokens)
            objects[r.seq_id] = module.Sequence(r.seq_id, r.prompt_len, r.max_tokens)
            try:
                sched.add(objects[r.seq_id])
            except Exception as e:  # any exception from the implementation is a difference
                return f"step {step} add({r.seq_id!r}): raised {e!r}", features
            if problem := compare(f"step {step} after add({r.seq_id!r})"):
                return problem, features
        before = state.num_preemptions
        state, batch = schedule(state)
        try:
            got = sched.schedule()
        except Exception as e:
            return f"step {step} schedule(): raised {e!r}", features
        if list(got.items()) != list(batch):
            return f"step {step} schedule(): returned {list(got.items())}, spec {list(batch)}", features
        if problem := compare(f"step {step} after schedule()"):
            return problem, features
        _note_schedule(features, state, before, batch)
        state, done = update(state, spec_sample)
        steps.finished(q.seq_id for q in done)
        try:
            got_done = sched.update()
        except Exception as e:
            return f"step {step} update(): raised {e!r}", features
        if impl_calls != spec_calls:
            return f"step {step} update(): sample_fn calls {impl_calls}, spec {spec_calls}", features
        if [q.seq_id for q in got_done] != [q.seq_id for q in done]:
            return (f"step {step} update(): returned {[q.seq_id for q in got_done]}, "
                    f"spec {[q.seq_id for q in done]}"), features
        if any(objects[q.seq_id] is not q for q in got_done):
            return f"step {step} update(): returned objects that add() was not given", features
        if problem := compare(f"step {step} after update()"):
            return problem, features
        for q in done:
            if config.eos is not None and q.output[-1] == config.eos and len(q.output) < q.max_tokens:
                features.add(f"eos {config.eos} finishes early")
    if not steps.done:
        return f"the spec ran past its liveness bound {bound}", features
    return None, features


def _note_schedule(features: set[str], state: State, before: int, batch: tuple[tuple[str, int], ...]) -> None:
    c = state.config
    preempted = state.num_preemptions - before
    if preempted:
        features.add("preemption")
    if preempted >= 2:
        features.add("two preemptions in one step")
    scheduled = {seq_id for seq_id, _ in batch}
    if state.waiting and state.waiting[0].output and state.waiting[0].seq_id not in scheduled:
        features.add("preempted sequence waits with its output")
    if len(state.running) == c.max_num_seqs and state.waiting:
        features.add("max_num_seqs reached")
    if c.max_num_batched_tokens < c.max_num_seqs:
        features.add("budget < max_num_seqs")
    if c.block_size == 1:
        features.add("block_size 1")
    remaining = {q.seq_id: q.num_tokens - q.num_computed for q in state.running}
    if any(n < remaining[seq_id] for seq_id, n in batch):
        features.add("chunked prefill")
