"""`check` and `grade` agree: a scheduler that `check` fails does not get full marks, with the same rule.

Two bugs of what outlives a call, each a small edit of impl/scheduler.py, that grading used to miss
(both scored 100 while `check` failed them):

- schedule() hands out one of three dicts in turn, refilled at each call: a caller that keeps a batch
  sees it change three calls later (H.retained; the sandbox child now keeps every returned value and
  reads it again at the end of the run, as `check`'s adapter does);
- every instance shares one waiting queue, a module global: alone each runs right, but two instances
  run call by call take each other's requests (H.instances; grading now runs, on every tenth case, two
  instances with different configs call by call, beside the second one alone).

And one bug of lost tokens: examples/p07_buggy clears a preempted sequence's output, so its recompute samples
those positions again. The workloads' model is a function of the position, so the same tokens come back;
`check` reruns such a run with a model that gives a new token for a position sampled again, and grading runs
every case that preempts that way from the start (a resample probe), so both find the changed outputs (OUT).

impl itself still passes `check` and gets 100.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.checks.checkers import Finding
from conformance.grading.collect import Entry
from conformance.grading.judge import CHILD_RECURSION_LIMIT, corpus_cases, grade_one
from conformance.grading.observe import Case, Observations
from conformance.grading.outputs import Grade
from conformance.grading.rubric import load_rubric
from conformance.profiles import PROFILES
from conformance.suite import run
from conformance.workloads.reach import cases as reach_cases

IMPL = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"
EDITS = {
    "dict_pool": [  # three dicts, cycled: the batch a caller kept is refilled three calls later
        ("        self._batch: dict[str, int] | None = None\n",
         "        self._batch: dict[str, int] | None = None\n        self._pool: list[dict[str, int]] = [{}, {}, {}]\n"
         "        self._turn = 0\n"),
        ("        return batch.copy()\n",
         "        out = self._pool[self._turn % 3]\n        self._turn += 1\n        out.clear()\n"
         "        out.update(batch)\n        return out\n"),
    ],
    "global_waiting": [  # one waiting queue for every instance: harmless alone, wrong beside another instance
        ("class Scheduler:\n", "_SHARED_WAITING: deque[Sequence] = deque()\n\n\nclass Scheduler:\n"),
        ("        self.waiting: deque[Sequence] = deque()  # head first\n",
         "        self.waiting: deque[Sequence] = _SHARED_WAITING  # head first\n"),
    ],
}
RULES = {"dict_pool": ("H.retained", "H.aliased"), "global_waiting": ("H.instances",)}  # a refilled dict that
# holds what it held three calls before has not changed: it is only the same object (H.aliased)


def submission(tmp_path: Path, name: str, edits: list[tuple[str, str]] | None = None) -> Path:
    """impl/scheduler.py with the edits of `name` (or `edits`), each applied exactly once."""
    text = IMPL.read_text()
    for old, new in EDITS[name] if edits is None else edits:
        assert text.count(old) == 1, f"impl/scheduler.py changed: {old!r} is not there once"
        text = text.replace(old, new)
    path = tmp_path / name / "p07_scheduler.py"
    path.parent.mkdir()
    path.write_text(text)
    return path


@pytest.fixture
def verdicts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Finding | None]]]:
    """Every case's verdicts of the grades made in the test, as grade_one judges them."""
    seen: list[dict[str, Finding | None]] = []
    judge = Observations.judge

    def keeping(self: Observations, case: Case, index: int) -> dict[str, Finding | None]:
        seen.append(judge(self, case, index))
        return seen[-1]
    monkeypatch.setattr(Observations, "judge", keeping)
    yield seen


def grade(path: Path) -> Grade:
    return grade_one(Entry(path.parent.name, path, path), dataclasses.replace(load_rubric(), explore=False))


def lost(g: Grade) -> list[tuple[str, float, str]]:
    return [(i.item.id, i.score, i.output[:300]) for i in g.items if i.score != i.item.points]


def hygiene_rules(seen: list[dict[str, Any]]) -> set[str]:
    return {v["hygiene"].rule for v in seen if v.get("hygiene") is not None}


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(EDITS))
def test_check_fails_it_and_grade_takes_points_for_the_same_rule(tmp_path: Path, name: str,
                                                                  verdicts: list[dict[str, Any]]) -> None:
    path = submission(tmp_path, name)
    report = run(str(path), "quick", diagnose=False)
    found = report.checks["hygiene"].counterexample
    assert report.verdict == "FAIL" and found is not None and found.finding.rule in RULES[name], report.verdict
    failing = {c for c, r in report.checks.items() if r.status == "fail"}
    assert failing == {"hygiene"}, f"what the probes' instances left behind reached other checks: {failing}"
    rule = found.finding.rule
    g = grade(path)
    assert g.score < 100, "grade gave full marks to a scheduler that check fails"
    assert rule in hygiene_rules(verdicts) <= set(RULES[name]), hygiene_rules(verdicts)
    [item] = [i for i in g.items if i.score < i.item.points]
    shown = item.output.replace("\\", "")
    assert item.item.id == "differential" and any(f"hygiene {r}" in shown for r in RULES[name]), lost(g)


PAST = {  # bugs that show only past a threshold the corpus stays below: the reach tiers find them in both commands
    "ids_keyed_by_512_chars": ([  # duplicate ids told apart by their first 512 characters (a store's key limit)
        ("        if seq_id in self._seq_ids:\n", "        if seq_id[:512] in self._seq_ids:\n"),
        ("        self._seq_ids.add(seq_id)\n", "        self._seq_ids.add(seq_id[:512])\n"),
    ], "hygiene"),
    "running_from_a_pool_of_128": ([  # each instance's running list taken from a module-level pool of 128
        ("class Scheduler:\n", "_POOL: list[list[Sequence]] = [[] for _ in range(128)]\n_MADE = [0]\n\n\n"
                                "class Scheduler:\n"),
        ("        self.running: list[Sequence] = []  # admission order; running[-1] is the next victim\n",
         "        _MADE[0] += 1\n        self.running: list[Sequence] = _POOL[_MADE[0] % 128]\n"
         "        self.running.clear()\n"),
    ], "hygiene"),
}


def test_the_default_rubric_grades_every_reach_case_of_check_default() -> None:
    """Each reach case `check --profile default` runs is a case of the default rubric's grade, under the same name
    and with the same workloads (a group's schedulers as its lanes), and the grade runs no other."""
    rubric = load_rubric()
    cases, _ = corpus_cases(rubric.corpus, policy=rubric.policy, reach=rubric.reach)
    graded = {c.vector_id: c.lanes or (c.workload,) for c in cases if c.vector_id.startswith("reach/")}
    checked = {f"reach/{c.name}": c.workloads for stage in PROFILES["default"].stages() if stage.source == "reach"
               for c in reach_cases(stage.tier, CHILD_RECURSION_LIMIT)}
    assert graded.keys() == checked.keys(), sorted(graded.keys() ^ checked.keys())[:5]
    assert all(graded[k] == checked[k] for k in checked), [k for k in checked if graded[k] != checked[k]][:5]


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(PAST))
def test_a_bug_past_a_threshold_fails_check_and_costs_points_for_the_same_check(tmp_path: Path, name: str) -> None:
    edits, check = PAST[name]
    text = IMPL.read_text()
    for old, new in edits:
        assert text.count(old) == 1, f"impl/scheduler.py changed: {old!r} is not there once"
        text = text.replace(old, new)
    path = tmp_path / name / "p07_scheduler.py"
    path.parent.mkdir()
    path.write_text(text)
    report = run(str(path), "quick", diagnose=False)
    found = report.checks[check].counterexample
    assert report.verdict == "FAIL" and found is not None and found.source.startswith("reach/"), report.summary()
    g = grade(path)
    assert g.score < 100, "grade gave full marks to a scheduler that check fails past a threshold"
    assert any(check in i.failed_checks for i in g.items), lost(g)


@pytest.mark.long
def test_impl_passes_check_and_gets_full_marks(verdicts: list[dict[str, Any]]) -> None:
    assert run(str(IMPL), "quick", diagnose=False).verdict == "PASS"
    g = grade(IMPL)
    assert g.score == 100, lost(g)
    assert hygiene_rules(verdicts) == set()
    assert sum(1 for v in verdicts if "stateful" in v) > 0, "the state machine's runs were graded"


@pytest.mark.long
def test_outputs_lost_to_preemption_are_found_by_both_as_equivalence(tmp_path: Path) -> None:
    path = tmp_path / "buggy" / "p07_scheduler.py"
    path.parent.mkdir()
    path.write_text((IMPL.parents[1] / "examples" / "p07_buggy" / "p07_scheduler.py").read_text())
    report = run(str(path), "quick", diagnose=False)
    found = report.checks["equivalence"].counterexample
    assert found is not None and found.finding.rule == "OUT", report.checks["equivalence"]
    g = grade(path)
    assert any("equivalence" in i.failed_checks for i in g.items), lost(g)
    # its dicts and instances are fine: the fresh-dict and two-instance probes of a case that preempts draw by the
    # model its own run (a resample probe) drew by, so the positions it samples again are no hygiene finding
    assert report.checks["hygiene"].status == "pass", report.checks["hygiene"]
    assert not any("hygiene" in i.failed_checks for i in g.items), lost(g)


@pytest.mark.long
def test_a_status_that_cannot_be_read_is_a_finding_for_both(tmp_path: Path) -> None:
    """A white-box field that is there but unreadable (a status that is no SequenceStatus member and has no name)
    is an invariants finding in `check`'s adapter and in the sandbox child alike; an absent one is a note."""
    path = tmp_path / "status" / "p07_scheduler.py"
    path.parent.mkdir()
    text = IMPL.read_text()
    assert text.count("_WAITING = SequenceStatus.WAITING\n") == 1
    path.write_text(text.replace("_WAITING = SequenceStatus.WAITING\n", "_WAITING = object()  # a private marker\n"))
    report = run(str(path), "quick", diagnose=False)
    found = report.checks["invariants"].counterexample
    assert found is not None and "status" in found.finding.message, report.checks["invariants"]
    g = grade(path)
    items = [i for i in g.items if "invariants" in i.failed_checks]
    assert items and all("SequenceStatus" in i.output.replace("\\", "") for i in items), lost(g)


SAME = {  # name: check's profile, the edits of impl/scheduler.py, a check both must fail, one both must pass
    # the sandbox's model hands back an eos token it has just made, as check's does: before, it handed back the very
    # object the scheduler was given, so `token is eos` passed in grade and failed in check (the unseen ev_eos_is
    # got 99.36)
    "eos_by_identity": ("quick", [("if token == eos or", "if token is eos or")], "differential", None),
    # a self-preemption left out of num_preemptions: the golden cases and the white-box comparison with the spec see
    # it, the state machine does not (it compares the calls and the state invariants I1, I3 and I6), so `stateful`
    # passes in check; grade's stateful item judged every white-box finding and failed it (the unseen
    # cpp_selfpreempt_count)
    "self_preemption_uncounted": ("default", [("            self.num_preemptions += 1\n",
                                                "            self.num_preemptions += victim is not seq\n")],
                                  "golden", "stateful"),
}


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(SAME))
def test_the_same_checks_fail_in_both(tmp_path: Path, name: str) -> None:
    profile, edits, fails, passes = SAME[name]
    path = submission(tmp_path, name, edits)
    report = run(str(path), profile, diagnose=False)
    failing = {check for check, c in report.checks.items() if c.status == "fail"}
    assert fails in failing and passes not in failing, report.summary()
    g = grade(path)
    assert {c for i in g.items for c in i.failed_checks} == failing, (failing, lost(g))
