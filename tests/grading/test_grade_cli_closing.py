"""The last line of `schedcheck grade` names what the run did and the files it wrote, and nothing it did not."""

from __future__ import annotations

from pathlib import Path

from conformance.grading.cli import closing_line
from conformance.grading.records import GRADER_ERROR, NOT_GRADED


def test_the_closing_line_explains_not_graded_only_when_there_is_one() -> None:
    clean = closing_line(Path("out"), {"a": "graded", "b": "graded"})
    assert clean.startswith("schedcheck grade: 2 graded, 0 not graded, 0 grader errors;"), clean
    assert "cannot be used" not in clean
    mixed = closing_line(Path("out"), {"a": "graded", "b": NOT_GRADED, "c": GRADER_ERROR})
    assert "1 not graded (the submission cannot be used: the reason is in summary.csv), 1 grader errors" in mixed


def test_the_files_only_some_entries_get_are_named_as_such() -> None:
    line = closing_line(Path("out"), {"a": "graded"})
    assert "where the entry has a counterexample, counterexample.json and report.html" in line
