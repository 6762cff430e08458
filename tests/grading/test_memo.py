"""The memo of reports already read (conformance.sandbox.memo) never changes what a grade says.

A hit must give exactly what reading and judging the bytes again would give, whatever was graded
before: the same runs are read and judged with the memo off, then with it filled by other
submissions, and every workload result and every case's verdicts must be equal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.grading.calibrate import write_class
from conformance.grading.judge import corpus_cases, corpus_id, limits_for, run_workloads
from conformance.grading.observe import EXPLORED, VERDICTS, Observations, explored, judge_case
from conformance.grading.rubric import load_rubric
from conformance.sandbox import record
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import SandboxResult

CASES = 80  # the first cases of the corpus (golden and vectors), with their twins and probe runs
BUGS = ("preempt_to_tail", "batch_not_copied", "max_tokens_off_by_one")


@pytest.fixture(scope="module")
def class_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("memo-class")
    write_class(dest)
    return dest


@pytest.fixture
def memos() -> Iterator[None]:
    saved = [(m, m.enabled) for m in (record.TRACES, VERDICTS, EXPLORED)]
    for m, _ in saved:
        m.clear()
    yield
    for m, enabled in saved:
        m.enabled = enabled
        m.clear()


def subset() -> tuple[tuple, tuple]:  # type: ignore[type-arg]
    cases, runs = corpus_cases(corpus_id())
    keep = cases[:CASES]
    used = sorted({i for k, c in enumerate(keep) for i in (k, c.twin, c.mutated, c.paired, c.alone) if i is not None})
    where = {old: new for new, old in enumerate(used)}
    moved = tuple(dataclasses.replace(c, **{f: None if getattr(c, f) is None else where[getattr(c, f)]
                                            for f in ("twin", "mutated", "paired", "alone")}) for c in keep)
    return moved, tuple(runs[i] for i in used)


def grade_parts(path: Path, cases: tuple, runs: tuple) -> tuple[SandboxResult, list]:  # type: ignore[type-arg]
    result = run_in_sandbox(path, runs, limits_for(load_rubric()))
    observed = Observations(run_workloads(runs), result.workloads)
    return result, [observed.judge(c, i) for i, c in enumerate(cases)]


def bare(result: SandboxResult) -> list[tuple[object, ...]]:
    """What a grade reads of each workload result (timings aside)."""
    return [(w.index, w.status, w.cause, w.steps, w.error) for w in result.workloads]


def test_a_filled_memo_gives_the_same_results_and_verdicts(class_dir: Path, memos: None) -> None:
    cases, runs = subset()
    for m in (record.TRACES, VERDICTS):
        m.enabled = False
    alone = {bug: grade_parts(class_dir / f"{bug}.py", cases, runs) for bug in BUGS}
    for m in (record.TRACES, VERDICTS):
        m.enabled = True
    grade_parts(class_dir / "correct.py", cases, runs)  # fills the memo with a correct submission's reports
    assert record.TRACES.weight > 0 and len(runs) <= record.TRACES.misses
    for bug in BUGS:
        hits = record.TRACES.hits
        result, verdicts = grade_parts(class_dir / f"{bug}.py", cases, runs)
        assert record.TRACES.hits > hits, f"{bug}: no report was read from the memo"
        assert bare(result) == bare(alone[bug][0]), bug
        assert verdicts == alone[bug][1], bug
        found = [v for v in verdicts if any(v.values())]
        assert found, f"{bug} passes the first {CASES} cases: pick cases that show it"


def test_the_memo_judges_like_judge_case(class_dir: Path, memos: None) -> None:
    """Observations.judge (memo and all) against judge_case on freshly made observed traces."""
    from conformance.grading.observe import observed_trace

    cases, runs = subset()
    workloads = run_workloads(runs)
    for bug in ("correct", *BUGS[:1]):
        for _ in range(2):  # the second time from the memo
            result, verdicts = grade_parts(class_dir / f"{bug}.py", cases, runs)
            fresh = [observed_trace(w, r) for w, r in zip(workloads, result.workloads, strict=True)]
            assert verdicts == [judge_case(c, fresh[i], None if c.twin is None else fresh[c.twin],
                                           None if c.mutated is None else fresh[c.mutated])
                                for i, c in enumerate(cases)]


def test_exploration_lines_from_the_memo_are_the_fresh_ones(class_dir: Path, memos: None) -> None:
    """explored() (memo and all) against the checkers run on freshly made observed traces of generated workloads."""
    from conformance.checks import checkers
    from conformance.grading.explore import generated_workloads
    from conformance.grading.observe import observed_trace

    workloads = generated_workloads("quick")
    shown = 0
    for bug in ("correct", *BUGS):
        result = run_in_sandbox(class_dir / f"{bug}.py", workloads, limits_for(load_rubric()))
        fresh = []
        for w, r in zip(workloads, result.workloads, strict=True):
            obs = observed_trace(w, r)
            f = next((found[0] for judge in (checkers.differential, checkers.liveness, checkers.hygiene)
                      if (found := judge(w, obs))), None)
            fresh.append(None if f is None else f"exploration: {len(w.requests)} requests, {w.config}: "
                                                f"[{f.check} {f.rule}] {f.message}")
        hits = EXPLORED.hits
        assert [explored(w, r) for w, r in zip(workloads, result.workloads, strict=True)] == fresh, bug
        assert [explored(w, r) for w, r in zip(workloads, result.workloads, strict=True)] == fresh, bug
        assert EXPLORED.hits >= hits + len(workloads)  # the second time, every line from the memo
        assert bug != "correct" or not any(fresh)
        shown += any(fresh)
    assert shown, "no bug shows in the first 40 generated workloads: pick ones that do"
