"""The reach tiers' cases run apart from the others, smallest first: a scheduler that fails their largest loses those.

The reach tiers go to 2^64 blocks, tokens and values. A correct scheduler that keeps a free list of block ids (as
paged-KV engines do) cannot be made with 2^25 blocks under the sandbox's memory, nor fill 2^28 in its time. Its
hangs there made the rest of the run count as time-outs after max_timeouts of them, and its crashes spent the
budget, among the other cases' runs: a correct scheduler with block ids scored 5.63. Now the reach cases come after
the others, in segments of their own (a fresh process each), ordered by their largest number
(conformance/grading/judge.py run_order).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.grading.collect import collect
from conformance.grading.judge import REACH_CLASSES, grade_one, grading_cases, ordered, reach_size, run_segments
from conformance.grading.rubric import load_rubric
from conformance.grading.scoring import in_scope
from conformance.sandbox.budget import submission_budget
from conformance.sandbox.run import SKIPPED_AFTER_HANGS
from conformance.sandbox.types import PlannedRun
from conformance.workloads.reach import TAG as REACH_TAG

STYLES = Path(__file__).parent / "resource_styles"


def test_the_reach_cases_run_apart_from_the_others_smallest_first_and_their_instances_last():
    cases, runs = grading_cases(load_rubric())
    plan = ordered(cases, runs)
    owner: dict[int, int] = {}
    for k, c in enumerate(cases):
        for i in (k, c.twin, c.mutated, c.paired, c.alone, c.group, *c.lanes_alone):
            if i is not None:
                owner.setdefault(i, k)
    reach = [all(REACH_TAG in cases[owner[i]].tags for i in s.order) for s in plan]
    assert not reach[0] and all(reach[1:]), "the first segment holds every other case's runs, and no reach run"
    assert not any(REACH_TAG in cases[owner[i]].tags for i in plan[0].order)
    assert sorted(i for s in plan for i in s.order) == list(range(len(runs)))
    assert len(plan) == 1 + 2 * len(REACH_CLASSES), "the others; then each class of reach cases: its runs alone, its " \
        "instances together"
    for k, s in enumerate(plan[1:]):
        sizes = [reach_size(cases[owner[i]].workload) for i in s.order if i < len(cases)]
        assert sizes == sorted(sizes), "smallest first: a hang or a spent budget skips what is larger still"
        together = [isinstance(r, PlannedRun) and bool(r.group or "beside" in r.probe) for r in s.runs]
        assert any(together) == (k % 2 == 1), "schedulers alive at once after the runs judged alone, apart"
    assert max(reach_size(cases[owner[i]].workload) for i in plan[1].order) < \
        min(reach_size(cases[owner[i]].workload) for s in plan[3:] for i in s.order)


@pytest.mark.long
@pytest.mark.parametrize("style", sorted(STYLES.glob("*.py")), ids=lambda p: p.stem)
def test_a_correct_scheduler_whose_cost_grows_with_the_numbers_loses_only_reach_cases(tmp_path, style):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / style.name).write_text(style.read_text())
    [entry] = collect(tmp_path / "subs", tmp_path / "work")
    rubric = load_rubric()
    cases, _ = grading_cases(rubric)
    with submission_budget(rubric.limits.run_seconds / 10, rubric.limits.run_seconds / 2):
        grade = grade_one(entry, rubric)
    assert grade.score < 100, "it fails the largest reach cases"
    for item in grade.items:
        others = sum(1 for c in cases if in_scope(item.item, c) and REACH_TAG not in c.tags)
        counts = re.search(r"\((\d+) of the (\d+) held-out ones\)", item.output)
        held = int(counts.group(2)) if counts else 0
        # every case it fails is a reach case: it passes at least every other public case and every held-out one
        assert item.vectors_passed >= others + held, (item.item.id, item.vectors_passed, others, held,
                                                      item.output[:1500])


def test_a_submission_that_hangs_everywhere_hangs_max_timeouts_times_in_all_the_public_segments(tmp_path):
    """The segments share one allowance of hangs, as one run did: after max_timeouts hangs, in any segment, the rest
    of the public runs count as time-outs without running (each segment with an allowance of its own let an
    endless loop hang max_timeouts times in each of the seven: a class with one such entry took minutes more)."""
    sub = tmp_path / "loop.py"
    sub.write_text((Path(__file__).parents[2] / "impl" / "scheduler.py").read_text()
                   + "\n\ndef _spin(self):\n    while True:\n        pass\n\n\nScheduler.schedule = _spin\n")
    plan = ordered(*grading_cases(load_rubric()))
    rubric = replace(load_rubric(), limits=replace(load_rubric().limits, workload_seconds=0.05, max_timeouts=2))
    opening = run_segments(sub, plan[:1], rubric)
    rest = run_segments(sub, plan[1:], rubric, opening)
    ran = [r for result in opening + rest for r in result.workloads if r.status != "not_run"]
    assert len(ran) == 2 and all(r.hung for r in ran), [(r.index, r.status) for r in ran]
    skipped = [r for result in rest for r in result.workloads]
    assert skipped and all(r.cause.startswith(SKIPPED_AFTER_HANGS) for r in skipped)
