"""What `schedcheck grade` says: a submission that cannot be used is "not graded" with its reason, apart from
the grader's own errors, and the closing line names every file the run wrote."""

from __future__ import annotations

import argparse
import csv
import io
import zipfile

from conformance.grading import cli, judge
from tests.rubric.test_runner import broken_grade


def bad_crc_zip(path):
    """A zip whose module fails its CRC check when read: the student's upload is broken, not the grader."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("p07_scheduler.py", "GOOD = 1\n" * 64)
    data = bytearray(path.read_bytes())
    data[data.index(b"GOOD") + 1] ^= 1
    path.write_bytes(bytes(data))


def test_an_unreadable_archive_is_not_graded_and_kept_apart_from_grader_errors(tmp_path, monkeypatch, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "good.py").write_text("GOOD")
    (subs / "b.py").write_text("bad")
    bad_crc_zip(subs / "broken.zip")
    monkeypatch.setattr(judge, "check_scope", lambda rubric: None)
    monkeypatch.setattr(judge, "grade_one", broken_grade)  # raises on entry b
    out = tmp_path / "out"
    args = argparse.Namespace(submissions=str(subs), out=str(out), jobs=1, rubric=None, profile=None, force=False,
                              shard=None, executor="local", scheduler_address=None, policy=None)
    assert cli.main(args) == 1  # b: a grader error, rerun to regrade it
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}
    assert {n: r["status"] for n, r in rows.items()} == {"good": "graded", "b": "grader error",
                                                         "broken": "not graded"}
    assert "Bad CRC-32" in rows["broken"]["cause"]
    page = (out / "overview.html").read_text()
    unused, errors = page.split("<h2>Not graded")[1].split("<h2>Grader errors")
    assert "broken" in unused and "Bad CRC-32" in unused and "broken" not in errors.split("<h2>")[0]
    assert "1 graded, 1 not graded, 1 grader errors" in page  # the 0 of a broken upload is no score
    overview = (out / "overview.md").read_text()
    assert "1 submissions" in overview and "## Not graded" in overview and "Bad CRC-32" in overview
    said = capsys.readouterr().err
    last = next(line for line in said.splitlines() if "wrote" in line)
    for name in ("summary.csv", "overview.md", "overview.html", "report.md", "report.html", "results.json",
                 "junit.xml", "counterexample.json"):
        assert name in last, name
    assert "1 graded, 1 not graded" in last and "1 grader errors" in last
