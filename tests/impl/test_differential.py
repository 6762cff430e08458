"""impl against the spec, call by call, on random feasible workloads (>= 2,000 in the default run) and scale ones."""

from collections import Counter

import pytest
from hypothesis import given, settings

import impl.scheduler
from conformance.workloads import reach, scale
from conformance.workloads.corpus import family_names, load_corpus
from conformance.workloads.generators import feasible_workloads, scale_workloads
from spec.model import Config
from spec.trace import Request, make_workload, run_workload
from tests.impl.lockstep import lockstep
from tests.impl.strategies import edge_workloads

EDGE_FEATURES = {
    "preemption", "two preemptions in one step", "preempted sequence waits with its output", "block_size 1",
    "budget < max_num_seqs", "max_num_seqs reached", "eos 0 finishes early", "arrival between steps",
    "chunked prefill",
}


def test_impl_matches_spec_on_feasible_workloads():
    seen: Counter[str] = Counter()

    @settings(max_examples=1000)
    @given(feasible_workloads())
    def check(workload):
        problem, features = lockstep(workload, impl.scheduler)
        assert problem is None, problem
        seen.update(features | {"workloads"})

    check()
    assert seen["workloads"] >= 1000, seen
    assert seen["preemption"] > 20 and seen["arrival between steps"] > 20, seen


@pytest.mark.long
def test_impl_matches_spec_on_edge_workloads():
    seen: Counter[str] = Counter()

    @settings(max_examples=1100)
    @given(edge_workloads())
    def check(workload):
        problem, features = lockstep(workload, impl.scheduler)
        assert problem is None, problem
        seen.update(features | {"workloads"})

    check()
    assert seen["workloads"] >= 1100, seen
    missing = EDGE_FEATURES - set(seen)
    assert not missing, f"the edge strategy never exercised {missing}: {seen}"
    assert seen["two preemptions in one step"] >= 20, seen


def test_two_victims_in_one_step_match_the_spec():
    """Step 2: a1 preempts a4 and a2 preempts a3 (1 block each, cache full); waiting ends [a3, a4]."""
    config = Config(num_blocks=4, block_size=1, max_num_seqs=4, max_num_batched_tokens=8)
    workload = make_workload(config, [Request(f"a{i}", 1, 3) for i in range(1, 5)])
    step2 = run_workload(workload).steps[1]
    assert step2.after_schedule.num_preemptions == 2
    assert [q.seq_id for q in step2.after_schedule.waiting] == ["a3", "a4"]
    problem, features = lockstep(workload, impl.scheduler)
    assert problem is None, problem
    assert "two preemptions in one step" in features


@pytest.mark.long
def test_impl_matches_spec_on_scale_families():
    """Big numbers, crowds, long runs and thrash: impl may stand in for the spec there only if they agree."""
    seen: Counter[str] = Counter()

    @settings(max_examples=12, derandomize=True, database=None, deadline=None)
    @given(scale_workloads())
    def check(workload):
        problem, _ = lockstep(workload, impl.scheduler)
        assert problem is None, problem
        seen.update(workload.tags)

    check()
    assert set(seen) == set(scale.FAMILIES), seen


def test_impl_matches_spec_on_every_frozen_scale_vector():
    vectors, _ = load_corpus(families=[f for f in family_names() if f.startswith("scale-")])
    assert len(vectors) >= 20
    for v in vectors:
        problem, _ = lockstep(v.workload, impl.scheduler)
        assert problem is None, (v.vector_id, problem)


def test_impl_matches_spec_on_the_workloads_that_reach_every_threshold():
    """The reach tier `quick` (conformance/workloads/reach.py): crowds to max_num_seqs 2**8 + 1, numbers to
    2**32 + 1, ids whose hashes collide, long runs. A rule of spec/rules.py wrong only past a threshold (a
    max_num_seqs cap at 256, say) is past every bound of the proofs; impl disagrees with it here."""
    singles = [case.workloads[0] for case in reach.cases("quick") if not case.group]
    assert len(singles) >= 100
    for w in singles:
        problem, _ = lockstep(w, impl.scheduler)
        assert problem is None, (w.name, problem)


@pytest.mark.long
def test_impl_matches_spec_on_the_default_reach_tier():
    """The tier `default`: numbers to 2**64 + 1, crowds to 2**11 + 1 in flight, 2**11 + 1 steps of a blocked head
    and of self-preemption (about 30 s)."""
    for case in reach.cases("default"):
        if not case.group:
            problem, _ = lockstep(case.workloads[0], impl.scheduler)
            assert problem is None, (case.name, problem)
