"""The z3 encoding with every input fixed gives the same trace as the Python model (and each bug variant)."""

import itertools
import random

import pytest
import z3

from spec.bounded import variants
from spec.bounded.encode import Bounds, Inputs
from spec.bounded.transition import Run
from spec.bounded.witness import pin, read
from spec.model import Config
from spec.rules import peak_blocks
from spec.trace import Request, make_workload, run_workload


def random_workloads(seed, count, bounds):
    rng = random.Random(seed)
    while count:
        bs, n = rng.randint(1, bounds.block_size), rng.randint(1, bounds.slots)
        reqs = sorted((Request("", rng.randint(1, bounds.prompt_len), rng.randint(1, bounds.max_tokens),
                               rng.randint(1, bounds.steps // 2)) for _ in range(n)), key=lambda r: r.arrival)
        reqs = [Request(f"r{i}", r.prompt_len, r.max_tokens, r.arrival) for i, r in enumerate(reqs)]
        peak = max(peak_blocks(Config(1, bs, 1, 1), r.prompt_len, r.max_tokens) for r in reqs)
        if peak > bounds.num_blocks:
            continue
        config = Config(rng.randint(peak, bounds.num_blocks), bs, rng.randint(1, bounds.max_num_seqs),
                        rng.randint(1, bounds.budget), 0)
        eos = {r.seq_id: [k for k in range(r.max_tokens) if rng.random() < 0.2] for r in reqs}
        count -= 1
        yield make_workload(config, reqs, eos_at=eos)


def snapshot(state, slots):
    seqs = {f"r{j}": {"num_computed": 0, "num_blocks": 0, "len_output": 0, "status": "UNARRIVED"} for j in range(slots)}
    for q in state.seqs():
        seqs[q.seq_id] = {"num_computed": q.num_computed, "num_blocks": q.num_blocks, "len_output": len(q.output),
                          "status": q.status.name}
    return {"running": [q.seq_id for q in state.running], "waiting": [q.seq_id for q in state.waiting],
            "blocks_used": state.blocks_used, "num_preemptions": state.num_preemptions, "seqs": seqs}


SIX = Bounds(slots=3, steps=6)


def disagreements(bug, count, seed, bounds=SIX, skip=0):
    """Workloads (the `skip`-th to the (skip + count)-th of the seed's stream) whose solver trace differs."""
    x = Inputs.fresh(bounds)
    run = Run(bounds, x, bug)
    bad = []
    for w in itertools.islice(random_workloads(seed, skip + count, bounds), skip, None):
        steps = variants.run(w, bug, max_steps=bounds.steps)
        s = z3.Solver()
        s.add(run.defs + pin(x, w, bounds))
        assert s.check() == z3.sat
        m = s.model()
        for k, st in enumerate(steps, 1):
            mid, post = read(m, run.mid[k], bounds), read(m, run.post[k], bounds)
            batch = mid.pop("batch")
            post.pop("batch")
            if (mid, batch, post) != (snapshot(st.after_schedule, 3), list(st.batch), snapshot(st.after_update, 3)):
                bad.append((w, k))
                break
        if any(z3.is_true(m.eval(u)) for us in run.unwind for u in us):
            bad.append((w, "unwind"))
    return bad


def test_variant_model_without_bug_is_the_spec():
    for w in random_workloads(3, 300, Bounds(slots=3, steps=10)):
        spec_steps = [(s.batch, s.after_update) for s in run_workload(w).steps]
        assert [(s.batch, s.after_update) for s in variants.run(w)] == spec_steps


def test_encoding_agrees_with_the_model():
    assert disagreements(None, 60, seed=11) == []


@pytest.mark.parametrize("bug", ["preempt_to_tail", "phase2_continue", "victim_first", "sample_during_prefill"])
def test_encoding_agrees_with_the_model_under_a_bug(bug):
    assert disagreements(bug, 8, seed=5) == []


@pytest.mark.slow
@pytest.mark.parametrize("part", range(4))
def test_encoding_agrees_with_the_model_on_10000_workloads(part):
    """10,000 workloads of one seed's stream, in four parts of 2,500 (about 7 minutes each on one core)."""
    assert disagreements(None, 2_500, seed=2026, bounds=Bounds(slots=3, steps=10), skip=2_500 * part) == []


@pytest.mark.slow
@pytest.mark.parametrize("bug", variants.EXPRESSIBLE)
def test_encoding_agrees_with_every_bug_variant(bug):
    assert disagreements(bug, 100, seed=9) == []


def test_a_planted_encoding_mistake_is_caught(monkeypatch):
    """The agreement check can fail: an encoding that forgets to free the victim's blocks disagrees."""
    original = Run.preempt

    def leaky(self, s, pos):
        out = original(self, s, pos)
        return out.__class__(*(getattr(out, f) if f != "used" else s.used for f in out.__slots__))
    monkeypatch.setattr(Run, "preempt", leaky)
    assert disagreements(None, 20, seed=11) != []
