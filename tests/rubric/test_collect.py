"""Finding submissions in a folder: files, folders, zips; nothing is lost, nothing escapes."""

import zipfile

import pytest

from conformance.grading.collect import collect

SRC = "class Scheduler: pass\n"


def test_files_folders_and_zips_are_all_found(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text(SRC)
    (subs / "bob").mkdir()
    (subs / "bob" / "p07_scheduler.py").write_text(SRC)
    with zipfile.ZipFile(subs / "carol.zip", "w") as z:
        z.writestr("carol/p07_scheduler.py", SRC)
        z.writestr("carol/notes.txt", "x")
    (subs / "dave").mkdir()
    (subs / "readme.txt").write_text("hi")
    entries = {e.name: e for e in collect(subs, tmp_path / "work")}
    assert sorted(entries) == ["alice", "bob", "carol", "dave", "readme.txt"]
    assert entries["carol"].module.read_text() == SRC
    assert entries["dave"].module is None and "holds no p07_scheduler.py" in entries["dave"].problem
    assert "not a submission" in entries["readme.txt"].problem


def test_zip_paths_that_escape_are_refused(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    with zipfile.ZipFile(subs / "evil.zip", "w") as z:
        z.writestr("../../escape.py", SRC)
        z.writestr("p07_scheduler.py", SRC)
    (e,) = collect(subs, tmp_path / "work")
    assert e.module is None and "outside the zip" in e.problem
    assert not (tmp_path / "escape.py").exists()


def test_a_corrupt_zip_is_a_problem_not_a_crash(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "broken.zip").write_bytes(b"PK\x03\x04 not really")
    (e,) = collect(subs, tmp_path / "work")
    assert e.module is None and "cannot be read" in e.problem


def test_two_entries_with_one_name_are_refused(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "x.py").write_text(SRC)
    (subs / "x").mkdir()
    with pytest.raises(ValueError, match="same result folder: x"):
        collect(subs, tmp_path / "work")
