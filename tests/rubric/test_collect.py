"""Finding submissions in a folder: files, folders, zips; nothing is lost, nothing escapes."""

import re
import zipfile

import pytest

from conformance.grading.collect import RESERVED, collect, slug, tame

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


def test_two_entries_with_one_name_are_both_refused_and_kept_apart(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "x.py").write_text(SRC)
    (subs / "x").mkdir()
    (subs / "x" / "p07_scheduler.py").write_text(SRC)
    entries = collect(subs, tmp_path / "work")
    assert sorted(e.name for e in entries) == ["x", "x.py"]
    assert all(e.module is None and "same result folder" not in e.problem and "rename one" in e.problem
               for e in entries)


def entry(subs, name):
    (found,) = [e for e in collect(subs, subs.parent / "work") if e.source.name == name]
    return found


@pytest.fixture
def subs(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "honest.py").write_text(SRC)
    return folder


def test_symlinks_fifos_and_linked_modules_are_refused_without_being_opened(subs, tmp_path):
    import os

    (tmp_path / "reference.py").write_text(SRC)
    (subs / "link.py").symlink_to(tmp_path / "reference.py")
    os.mkfifo(subs / "x.py")  # opening it would block the grader
    (subs / "linked").mkdir()
    (subs / "linked" / "p07_scheduler.py").symlink_to(subs / "honest.py")
    (subs / "dirlink").symlink_to(subs / "linked")
    for name, words in (("link.py", "symbolic link"), ("x.py", "FIFO"), ("linked", "symbolic link"),
                        ("dirlink", "symbolic link")):
        e = entry(subs, name)
        assert e.module is None and words in e.problem, (name, e.problem)
    assert entry(subs, "honest.py").module == subs / "honest.py"


def test_oversized_files_and_deep_folders_are_refused_before_reading(subs):
    with open(subs / "sparse.py", "wb") as f:
        f.truncate(1 << 30)  # a 1 GiB sparse file: refused by its size, never read
    deep = subs / "deep"
    deep.mkdir()
    (deep / "p07_scheduler.py").write_text(SRC)
    inner = deep
    for _ in range(40):
        inner = inner / "d"
        inner.mkdir()
    assert "more than the" in entry(subs, "sparse.py").problem
    assert "levels deep" in entry(subs, "deep").problem


def test_names_that_are_outputs_or_do_not_decode_get_folders_that_cannot_collide(subs):
    """A name equal to a file grading writes is graded under a slug; one that does not decode is refused (and
    kept), also under a slug: no result folder is a reserved name, and every one is plain ASCII."""
    import os

    (subs / "summary.csv.py").write_text(SRC)
    (subs / "overview.md").mkdir()
    (subs / "overview.md" / "p07_scheduler.py").write_text(SRC)
    (subs / "overview.html").mkdir()
    (subs / "overview.html" / "p07_scheduler.py").write_text(SRC)
    with open(os.path.join(os.fsencode(subs), b"caf\xe9.py"), "w") as f:
        f.write(SRC)
    entries = {e.source.name: e for e in collect(subs, subs.parent / "work")}
    for name in ("summary.csv.py", "overview.md", "overview.html"):
        assert entries[name].module is not None and not entries[name].problem, entries[name]
        assert entries[name].name not in RESERVED and entries[name].name.startswith(name.split(".")[0])
    odd = [e for n, e in entries.items() if n.startswith("caf")][0]
    assert "not valid UTF-8" in odd.problem and re.fullmatch(r"caf[A-Za-z0-9._-]*-[0-9a-f]{10}", odd.name), odd.name
    names = [e.name for e in entries.values()]
    assert len(set(names)) == len(names) and not set(names) & RESERVED


@pytest.mark.parametrize("name", ["javascript:alert(1)", "名前", "a\u202eexe.py", "..", "-rf", "a b",
                                  "x" * 300, "Summary.CSV", "\u200b", "ok/../../etc"])
def test_a_slug_is_plain_ascii_of_bounded_length_and_names_that_differ_differ(name):
    got = slug(name)
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}(-[0-9a-f]{10})?", got), got
    assert len(got) <= 64 and got.lower() not in RESERVED
    assert slug(name + "!") != got and slug(name) == got


def test_a_plain_name_is_its_own_slug_and_invisible_characters_are_shown():
    for name in ("alice", "bob.py", "x_1-2", "A" * 64, "jose-24c2ab65b7x", "v-012345678"):
        assert slug(name) == name
    hashed = slug("José")
    assert slug(hashed) != hashed  # a plain name shaped like another's hashed folder is hashed too
    assert tame("a\u202eb\u200bc\x1b") == "a\\u202eb\\u200bc\\x1b"


def test_unreadable_archives_are_refused_one_by_one(subs):
    with zipfile.ZipFile(subs / "deflate64.zip", "w") as z:
        z.writestr("p07_scheduler.py", SRC)
    data = bytearray((subs / "deflate64.zip").read_bytes())
    for at in (8, data.rindex(b"PK\x01\x02") + 10):  # method field of the local and central headers
        data[at:at + 2] = (9).to_bytes(2, "little")  # Deflate64, which zipfile cannot read
    (subs / "deflate64.zip").write_bytes(bytes(data))
    with zipfile.ZipFile(subs / "locked.zip", "w") as z:
        z.writestr("p07_scheduler.py", SRC)
    data = bytearray((subs / "locked.zip").read_bytes())
    for at in (6, data.rindex(b"PK\x01\x02") + 8):  # the "encrypted" flag bit
        data[at] |= 1
    (subs / "locked.zip").write_bytes(bytes(data))
    with zipfile.ZipFile(subs / "absolute.zip", "w") as z:
        z.writestr("/etc/p07_scheduler.py", SRC)
    (subs / "truncated.zip").write_bytes((subs / "deflate64.zip").read_bytes()[:40])
    problems = {e.source.name: e.problem for e in collect(subs, subs.parent / "work")}
    assert "cannot be read" in problems["deflate64.zip"] and "NotImplementedError" in problems["deflate64.zip"]
    assert "encrypted" in problems["locked.zip"]
    assert "outside the zip" in problems["absolute.zip"]
    assert "cannot be read" in problems["truncated.zip"]
    assert problems["honest.py"] == ""


def test_a_hard_link_to_a_classmates_file_is_refused_and_the_classmate_kept(subs):
    import os

    (subs / "zed").mkdir()
    os.link(subs / "honest.py", subs / "zed" / "p07_scheduler.py")
    os.link(subs / "honest.py", subs / "zz.py")
    assert entry(subs, "honest.py").module == subs / "honest.py"
    assert "hard link" in entry(subs, "zed").problem
    assert "hard link to entry 'honest'" in entry(subs, "zz.py").problem
