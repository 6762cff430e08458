"""The benchmark's floor replays impl's run exactly: same batches, same sample calls, same outputs.

If it did less (or other) work than impl, impl/floor would not measure the cost of
block accounting, admission and preemption alone.
"""

from dataclasses import replace

from bench.floor import FloorScheduler
from bench.runners import arrivals_by_step, new_impl, record, reset
from bench.workloads import lognormal_requests, sample, w3_storm


def batches(sched, arrivals, steps):
    out = []
    for step in range(steps):
        for seq in arrivals[step]:
            sched.add(seq)
        out.append(list(sched.schedule().items()))
        out.append([q.seq_id for q in sched.update()])
    return out


def test_floor_replays_impl_batches_with_preemptions():
    w = w3_storm(n=40, spec_steps=0)
    w = replace(w, requests=lognormal_requests(40, seed=5, prompt_median=20, output_median=30, rate=1.0))
    w = replace(w, num_blocks=max(-(-(p + m - 1) // 16) for _, p, m, _ in w.requests) + 1)
    rec = record(w)
    assert rec.preemptions > 10
    sched, seqs = new_impl(w)
    want = batches(sched, arrivals_by_step(w, rec.steps, seqs), rec.steps)
    reset(rec.seqs)
    floor = FloorScheduler(rec.plan, w.max_num_batched_tokens, sample)
    assert batches(floor, arrivals_by_step(w, rec.steps, rec.seqs), rec.steps) == want
    assert [q.output for q in rec.seqs] == [q.output for q in seqs]
