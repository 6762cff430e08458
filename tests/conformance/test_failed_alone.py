"""A run made only to compare with (a group's scheduler alone, the second instance of a pair alone, the ample-cache
twin) that fails is a finding of its own, never a reason to skip the comparison.

A bug hid behind this: raising in the runs alone of a group's schedulers 2..n (told by their tokens) made the groups
skip, so a pool of 256 running lists scored 100 (tests/grading/attacks, tilt_alone_crash). A time-out stays
inconclusive (a loaded machine can cause one), and so does the second instance of a pair stopped at the first's cap.
"""

from __future__ import annotations

from pathlib import Path

from conformance.adapters import load_target
from conformance.checks.history import group_finding, judge_group, judge_instances, other_workload
from conformance.checks.probes import judge_equivalence
from conformance.drivers import run_workload
from conformance.workloads.generators import ample_num_blocks, with_num_blocks
from conformance.workloads.reach import lane

ROOT = Path(__file__).resolve().parents[2]
RAISES_AT_BLOCK_SIZE_2 = '''
_Base = Scheduler


class Scheduler(_Base):
    def update(self):
        if self.block_size == 2:
            raise RuntimeError("made to fail where it is only compared")
        return super().update()
'''


def raising(tmp_path: Path):
    path = tmp_path / "raises.py"
    path.write_text((ROOT / "impl" / "scheduler.py").read_text() + RAISES_AT_BLOCK_SIZE_2)
    return load_target(str(path))


def timed_out(observed: dict) -> dict:
    return {**observed, "stop": "error", "error": {"step": 1, "call": "schedule", "kind": "CallTimeout",
                                                    "message": "out of time"}}


def test_a_scheduler_of_a_group_that_fails_alone_is_the_groups_finding(tmp_path):
    lanes = [lane(i) for i in range(4)]  # block sizes 1, 2, 3, 4: the second fails, alone or not
    found, at = group_finding(lanes, raising(tmp_path))
    assert found is not None and found.check == "hygiene" and found.rule == "H.instances", found
    assert "did not finish (H.raised)" in found.message
    assert "scheduler 2 of a group of 4, run alone to compare instances with" in found.message and at == lanes[1]


def test_a_time_out_alone_leaves_the_group_inconclusive():
    impl = load_target("impl")
    lanes = [lane(i) for i in range(3)]
    alone = [run_workload(w, impl, white_box=False) for w in lanes]
    assert judge_group(lanes, [alone[0], timed_out(alone[1]), alone[2]], [None] * 3) == (None, lanes[0])


def test_the_second_instance_failing_alone_is_a_finding_and_stopped_at_the_firsts_cap_is_not(tmp_path):
    w = lane(0)
    other = other_workload(w)
    failing = run_workload(other, raising(tmp_path), white_box=False)  # other's block_size is 2
    impl = load_target("impl")
    alone_a = run_workload(w, impl, white_box=False)
    found = judge_instances(other, alone_a, alone_a, None, failing)
    assert [f.rule for f in found] == ["H.instances"] and "the second instance's workload" in found[0].message
    capped = {**run_workload(other, impl, white_box=False), "stop": "bound"}
    assert judge_instances(other, alone_a, alone_a, None, capped) == []


def test_an_ample_twin_that_fails_is_an_equivalence_finding(tmp_path):
    w = lane(0)
    impl = load_target("impl")
    tight = run_workload(w, impl, white_box=False)
    ample_w = with_num_blocks(w, ample_num_blocks(w))
    ample = {**run_workload(ample_w, impl, white_box=False), "stop": "error",
             "error": {"step": 2, "call": "update", "kind": "RuntimeError", "message": "x"}}
    [found] = judge_equivalence(w, tight, ample)
    assert found.rule == "OUT" and "did not finish (RuntimeError at step 2)" in found.message
    assert judge_equivalence(w, tight, timed_out(ample)) == []


def test_the_second_instance_stopped_at_the_firsts_cap_is_compared_up_to_there():
    """A pair runs as long as the first instance may; the second's run alone (a grade's, with its own cap) may go on.
    A correct scheduler's second instance of a long other workload beside a short first got [H.instances] "from done
    to bound" (reach/add-2048-after-2047-finished, whose other config holds one sequence at a time)."""
    w = lane(0)
    other = other_workload(w)
    impl = load_target("impl")
    alone_a, alone_b = run_workload(w, impl, white_box=False), run_workload(other, impl, white_box=False)
    assert len(alone_b["steps"]) > 2, "pick a lane whose other workload takes more than two steps"
    stopped = {**alone_b, "steps": alone_b["steps"][:2], "stop": "bound", "error": None}
    assert judge_instances(other, alone_a, alone_a, stopped, alone_b) == []
    changed = {**stopped, "steps": [{**stopped["steps"][0], "schedule": [["a9", 1]]}, *stopped["steps"][1:]]}
    assert [f.rule for f in judge_instances(other, alone_a, alone_a, changed, alone_b)] == ["H.instances"]
