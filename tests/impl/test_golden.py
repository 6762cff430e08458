"""impl reproduces the card's five worked cases (spec/golden/*.toml), checked like any recorded trace."""

import pytest

from impl import Scheduler, Sequence
from spec.golden import check_case, golden_cases
from spec.trace import Workload
from tests.impl.lockstep import impl_snapshot

CASES = golden_cases()


def impl_trace_json(workload: Workload) -> dict:
    """Run impl on a workload and record it in the trace JSON shape of spec.trace.trace_to_json."""
    c = workload.config
    sampled: list[list] = []

    def sample(seq: Sequence) -> int:
        token = workload.sample(seq.seq_id, tuple(seq.output))
        sampled.append([seq.seq_id, token])
        return token

    sched = Scheduler(num_blocks=c.num_blocks, block_size=c.block_size, max_num_seqs=c.max_num_seqs,
                      max_num_batched_tokens=c.max_num_batched_tokens, sample_fn=sample, eos=c.eos)
    pending = sorted(workload.requests, key=lambda r: r.arrival)
    steps = []
    step = 0
    while pending or sched.waiting or sched.running:
        step += 1
        added = []
        while pending and pending[0].arrival == step:
            r = pending.pop(0)
            sched.add(Sequence(r.seq_id, r.prompt_len, r.max_tokens))
            added.append(r.seq_id)
        batch = sched.schedule()
        after_schedule = impl_snapshot(sched)
        first = len(sampled)
        done = sched.update()
        steps.append({"step": step, "added": added, "schedule": [[i, n] for i, n in batch.items()],
                      "sampled": sampled[first:], "finished": [q.seq_id for q in done],
                      "after_schedule": after_schedule, "after_update": impl_snapshot(sched)})
    outputs = {q.seq_id: list(q.output) for q in sched.finished}
    return {"steps": steps, "outputs": dict(sorted(outputs.items())), "num_preemptions": sched.num_preemptions}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_impl_reproduces_card_case_step_by_step(case):
    assert check_case(case, impl_trace_json(case.workload)) == []


def test_golden_check_sees_a_wrong_impl_trace():
    case = next(c for c in CASES if c.name == "self_preemption")
    trace = impl_trace_json(case.workload)
    trace["steps"][1]["schedule"].append(["a2", 2])
    assert check_case(case, trace)
