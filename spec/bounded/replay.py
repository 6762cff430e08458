"""Replay a counterexample on the Python model (with the same bug) and say whether the violation shows.

This ties every solver answer back to executable code: a counterexample the
Python model does not reproduce would mean the encoding is wrong.
"""

from __future__ import annotations

from spec.bounded import variants
from spec.invariants import check_step
from spec.model import Config
from spec.rules import peak_blocks
from spec.trace import liveness_bound, workload_from_json


def violations(claim: str, workload: dict[str, object], bug: str | None, steps: int) -> list[str]:
    """What the Python model (with `bug`) shows of `claim` being broken on the workload, within `steps`."""
    w = workload_from_json(workload)
    if claim.startswith("I"):
        run = variants.run(w, bug, max_steps=steps)
        out = []
        for s in run:
            found = check_step(s.before, s.batch, s.after_schedule) + check_step(
                s.after_schedule, s.after_schedule.pending or (), s.after_update)
            out += [f"step {s.step}: {v}" for v in found if v.invariant == claim]
            if claim == "I2":  # the batch is a dict, so a second entry shows only here
                out += [f"step {s.step}: [I2] {i} is put into the batch twice" for i in s.batched_twice]
        return out
    if claim == "OUT":
        c = w.config
        ample = sum(peak_blocks(c, r.prompt_len, r.max_tokens) for r in w.requests)
        wa = type(w)(Config(ample, c.block_size, c.max_num_seqs, c.max_num_batched_tokens, c.eos), w.requests,
                     w.sample, w.name, w.tags)
        tight, roomy = variants.run(w, bug, max_steps=steps), variants.run(wa, bug, max_steps=steps)
        a = {q.seq_id: q.output for q in tight[-1].after_update.finished} if tight else {}
        b = {q.seq_id: q.output for q in roomy[-1].after_update.finished} if roomy else {}
        out = [f"{i}: {a[i]} vs {b[i]}" for i in a.keys() & b.keys() if a[i] != b[i]]
        if liveness_bound(w.requests) <= steps and (len(a) < len(w.requests) or len(b) < len(w.requests)):
            out.append("a run did not drain within the liveness bound")
        return out
    if claim == "LIVE":
        bound = liveness_bound(w.requests)
        run = variants.run(w, bug, max_steps=bound)
        last = run[-1].after_update if run else None
        return [f"not drained after {bound} steps"] if last is not None and (last.waiting or last.running) else []
    if claim in ("FA", "FB", "FC"):
        out = []
        for s in variants.run(w, bug, max_steps=steps):
            ids = dict(s.batch)
            left = [q.seq_id for q in s.before.running if q.seq_id not in ids
                    and any(x.seq_id == q.seq_id for x in s.after_schedule.running)]
            if claim == "FA" and left:
                out.append(f"step {s.step}: {left} neither scheduled nor preempted")
            budget = w.config.max_num_batched_tokens
            if claim == "FB" and max(len(s.after_schedule.running), len(s.after_update.running)) > budget:
                out.append(f"step {s.step}: more running than max_num_batched_tokens")
            if claim == "FC" and any(q.remaining != 1 for q in s.after_update.running[:-1]):
                out.append(f"step {s.step}: a running sequence other than the last is mid-prefill")
        return out
    return []


def confirm(claim: str, workload: dict[str, object], bug: str | None, steps: int) -> str:
    """'reproduced', 'not reproduced', or 'not replayable' (claims about the encoding's internals)."""
    if claim in ("unwind", "FD"):
        return "not replayable"
    return "reproduced" if violations(claim, workload, bug, steps) else "not reproduced"
