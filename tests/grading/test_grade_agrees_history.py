"""A failure that needs earlier runs in the process is hygiene's [H.history] in `check` and in `grade` alike.

The unseen bug cpp_finished_default collects finished sequences into a mutable default argument, one list
for every instance. Alone, a Scheduler is right; after another one in the same process, its `finished` holds
sequences it never saw (I6). Before, `check` blamed the invariants check with a counterexample that passed
when replayed, and `grade` blamed golden, invariants and stateful, each with a case that passed on its own.
Now each check's failures are confirmed on a freshly loaded copy of the submission (conformance/checks/fresh.py
in process, conformance/grading/confirm.py in the sandbox); none reproduces there, so both blame hygiene, and
the counterexample carries the earlier run it needs (its prelude), so it replays in a new process.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.checks.fresh import Fresh
from conformance.checks.history import CONFIRM_MAX
from conformance.checks.workload import check_workload
from conformance.grading.collect import Entry
from conformance.grading.judge import grade_one
from conformance.grading.rubric import load_rubric
from conformance.reports.traces import write_all
from conformance.suite import run
from spec.model import Config
from spec.trace import Request, make_workload
from tests.conformance.unseen.planted import source

ROOT = Path(__file__).resolve().parents[2]
W = make_workload(Config(8, 2, 2, 8), [Request("a1", 3, 2), Request("a2", 2, 2)])


def planted(tmp_path: Path, name: str = "cpp_finished_default") -> Path:
    path = tmp_path / name / "p07_scheduler.py"
    path.parent.mkdir(parents=True)
    path.write_text(source(name))
    return path


def test_a_fresh_copy_tells_history_from_a_fault_of_the_run(tmp_path: Path) -> None:
    shared = planted(tmp_path)
    factory = load_target(str(shared))
    assert check_workload(W, factory)["invariants"] is None  # the first instance is right
    second = check_workload(W, factory)["invariants"]
    assert second is not None and second.rule == "I6"  # the second sees the first one's sequences
    fresh = Fresh.of(str(shared), None, True)
    assert fresh.confirm("invariants", W, second, "test") is None and fresh.history == {"invariants": 1}
    assert fresh.factory is not None
    for _ in range(CONFIRM_MAX - 1):
        fresh.confirm("invariants", W, second, "test")
    assert fresh.settled("invariants")
    own = planted(tmp_path, "col_eos_zero")  # a fault of the run itself: a fresh copy fails it too
    w = make_workload(dataclasses.replace(W.config, eos=0), W.requests, eos_at={"a1": (0,)})
    found = check_workload(w, load_target(str(own)))
    check, finding = next((c, f) for c, f in found.items() if f is not None)
    again = Fresh.of(str(own), None, True).confirm(check, w, finding, "test")
    assert again is not None and again.check == check


@pytest.mark.long
def test_check_and_grade_both_blame_hygiene_and_the_trace_replays(tmp_path: Path) -> None:
    path = planted(tmp_path)
    report = run(str(path), "quick", diagnose=False)
    failing = {c for c, r in report.checks.items() if r.status == "fail"}
    assert failing == {"hygiene"}, report.summary()
    cx = report.checks["hygiene"].counterexample
    assert cx is not None and cx.finding.rule == "H.history" and cx.prelude, cx
    trace = next(p for p in write_all(cx, 1, tmp_path / "traces", str(path)) if p.suffix == ".json")
    assert json.loads(trace.read_text())["prelude"]
    replayed = subprocess.run([sys.executable, "-m", "conformance", "replay", str(trace), str(path)], cwd=ROOT,
                              capture_output=True, text=True, check=False)
    assert replayed.returncode == 1 and "[I6]" in replayed.stdout, replayed.stdout + replayed.stderr
    g = grade_one(Entry("history", path, path), dataclasses.replace(load_rubric(), explore=False))
    blamed = {c for i in g.items for c in i.failed_checks}
    assert blamed == {"hygiene"} and g.score < 100, [(i.item.id, i.score, i.failed_checks) for i in g.items]
    assert g.replay is not None and g.replay["finding"]["rule"] == "H.history", g.replay
    assert g.replay["prelude"] == [{"mode": "repeat", "times": 256}]  # run until it fails, as check's may ask
    assert "[H.history]" in g.replay["note"] and "up to 256 times" in g.replay["note"]  # what it can rebuild
    saved = tmp_path / "counterexample.json"  # grade's own file, as the student gets it
    saved.write_text(json.dumps(g.replay))
    again = subprocess.run([sys.executable, "-m", "conformance", "replay", str(saved), str(path)], cwd=ROOT,
                           capture_output=True, text=True, check=False)
    assert again.returncode == 1 and "FAIL" in again.stdout, again.stdout + again.stderr


def test_a_case_put_down_to_history_still_fails_every_item_that_named_its_check() -> None:
    """Only the blame moves to hygiene: a bug that waits for some earlier runs (or that behaves when loaded anew,
    as the confirmation loads it) scored 98.5 where the same bug always on scored 89."""
    from conformance.checks.checkers import Finding
    from conformance.checks.history import after_history
    from conformance.grading.observe import Case
    from conformance.grading.scoring import score_item
    from conformance.sandbox.types import WorkloadResult

    rubric = load_rubric()
    item = dataclasses.replace(rubric.items[0], features=(), checks=("invariants",))
    broke = Finding("invariants", "I6", 2, "update", "a2 is in finished twice")
    cases = (Case("c0", W, ()), Case("c1", W, ()))
    moved = after_history(broke)  # as conformance/grading/confirm.py leaves it: in place, and hygiene's
    verdicts = [{"differential": None, "invariants": moved, "hygiene": moved},
                {"differential": None, "invariants": None, "hygiene": None}]
    results = tuple(WorkloadResult(i, c.vector_id, "ok", "") for i, c in enumerate(cases))
    observed = [{"steps": [], "error": None, "stop": "done", "outputs": {}} for _ in cases]
    got = score_item(item, rubric, cases, verdicts, [{}] * len(cases), results, observed)
    assert (got.vectors_passed, got.vectors_run) == (1, 2) and got.score == item.points / 2
    assert got.failed_checks == ("hygiene",)  # the check blamed, as check's report blames it: a failed item never
    # names no check (it named none here, so a tool matching grade's items to check's failing rows found nothing)
    other = dataclasses.replace(item, checks=("differential",))
    other_item = score_item(other, rubric, cases, verdicts, [{}] * len(cases), results, observed)
    assert other_item.vectors_passed == 2  # another check


def test_the_docs_state_the_confirmation_as_the_code_does() -> None:
    text = " ".join((ROOT / "docs" / "conformance.md").read_text().split())
    assert CONFIRM_MAX == 8 and text.count("up to eight") == 2 and "after one and then two earlier runs" in text


def test_a_repro_of_a_case_that_needs_other_schedulers_or_history_says_it_may_pass_alone() -> None:
    """grade's standalone pytest file runs one scheduler in a new process: for a finding that needs other schedulers
    alive beside it, or earlier runs, it says so and points at the replay file, which rebuilds them."""
    from conformance.checks.checkers import Finding
    from conformance.grading.feedback import pytest_repro
    from conformance.grading.observe import Case
    from spec.golden import case_named

    w = case_named("self_preemption").workload
    for rule, words in (("H.instances", "other schedulers alive beside it"), ("H.history", "after earlier runs"),
                        ("P2", None)):
        text = pytest_repro(Case("v1", w, ()), Finding("hygiene", rule, 1, "schedule", "m"))
        compile(text, "repro", "exec")
        assert (words in text) if words else "may pass" not in text, (rule, text[:400])
