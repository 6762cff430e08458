"""`check` and `grade` give a submission one verdict: PASS exactly at full marks, and the same failing checks.

The default run measures two submissions end to end through both command lines (impl, and a catalog mutant whose
bug shows in several checks); `-m slow` measures every scheduler the repository holds under the default profile,
with the outside styles and bugs of tests/conformance and the edits of tests/grading/test_grade_agrees added.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.selfcheck.agree import ROOT, Agreement, main, submissions
from tests.conformance.unseen import planted
from tests.grading.test_grade_agrees import EDITS, IMPL
from tests.grading.test_missing_field import without_num_blocks


def measured(tmp_path: Path, profile: str, *args: str) -> tuple[int, list[dict[str, object]]]:
    code = main([str(tmp_path / "agree"), "--profile", profile, *args])
    return code, json.loads((tmp_path / "agree" / "agree.json").read_text())


JUDGED_HOSTILE = ("bool_n", "float_n", "idle", "lying_dict", "negative_n", "replace_lists", "unknown_id", "wrong_type")


def outside(tmp_path: Path) -> list[str]:
    """`--add` arguments for the schedulers the tests hold: written from the docs alone, planted, edited."""
    (tmp_path / "unseen").mkdir(parents=True)
    for name in planted.UNSEEN:
        (tmp_path / "unseen" / f"{name}.py").write_text(planted.source(name))
    (tmp_path / "edit").mkdir()
    for name, edits in EDITS.items():
        text = IMPL.read_text()
        for old, new in edits:
            text = text.replace(old, new)
        (tmp_path / "edit" / f"{name}.py").write_text(text)
    (tmp_path / "hostile").mkdir()
    for name in JUDGED_HOSTILE:  # the hostile set's wrong values, safe to run in process: both commands judge them
        (tmp_path / "hostile" / f"{name}.py").write_text(
            IMPL.read_text() + "\n\n" + (ROOT / "tests" / "grading" / "hostile" / f"{name}.py").read_text())
    (tmp_path / "field").mkdir()  # a Sequence with no num_blocks: black box and a note, in both
    without_num_blocks(tmp_path / "field").rename(tmp_path / "field" / "no_num_blocks.py")
    folders = [ROOT / "tests" / "conformance" / "unseen_styles", tmp_path / "unseen", tmp_path / "edit",
               tmp_path / "hostile", tmp_path / "field"]
    return [arg for folder in folders for arg in ("--add", str(folder))]


def test_every_kind_of_submission_is_listed_once() -> None:
    subs = list(submissions())
    names = [s.name for s in subs]
    assert len(names) == len(set(names))
    assert {"impl", "style", "mutant", "example"} <= {s.kind for s in subs}


def test_a_disagreement_is_seen_both_ways() -> None:
    """The comparison itself can fail: on the verdict, and on the failing checks alone."""
    same = Agreement("x", "mutant", "FAIL", 80.0, "graded", ("differential",), ("differential",))
    assert same.agrees
    assert not Agreement("x", "mutant", "PASS", 80.0, "graded", (), ()).agrees
    assert not Agreement("x", "mutant", "FAIL", 100.0, "graded", ("hygiene",), ()).agrees
    assert not Agreement("x", "mutant", "FAIL", 80.0, "graded", ("differential", "invariants"),
                         ("differential",)).agrees
    assert not Agreement("x", "impl", "PASS", None, "not graded", (), ()).agrees


@pytest.mark.long
def test_check_and_grade_agree_on_impl_and_a_mutant(tmp_path: Path) -> None:
    code, rows = measured(tmp_path, "quick", "--only", "impl,mutant_budget_not_shared")
    by_name = {r["name"]: r for r in rows}
    assert by_name["impl"]["verdict"] == "PASS" and by_name["impl"]["score"] == 100.0
    bug = by_name["mutant_budget_not_shared"]
    assert bug["verdict"] == "FAIL" and bug["grade_failed"] and bug["check_failed"]
    assert code == 0, rows


@pytest.mark.slow
def test_check_and_grade_agree_on_every_submission_here(tmp_path: Path) -> None:
    """Under `check --profile default`, the profile the default rubric's items are made of: 80 of 80 agreed on
    2026-12-05 (about 25 min on 2 cores). Under quick, 75 of 80: quick runs fewer workloads than grading, and the 5 fail
    one more check in grade."""
    code, rows = measured(tmp_path, "default", *outside(tmp_path / "added"))
    assert len(rows) > 70
    assert code == 0, [r for r in rows if not r["agrees"]]
