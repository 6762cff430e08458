"""The batch runner: every entry graded once, resumable, shardable, parallel, summary rebuilt from disk.

The grading function here is a small deterministic stand-in (its score is read
from the submission's text), so these tests exercise the runner alone.
"""

import csv
import io
from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.grading.batch import grade_all, in_shard, parse_shard
from conformance.grading.collect import collect
from conformance.grading.outputs import Grade, ItemResult
from conformance.grading.records import load_grade, write_summary
from conformance.grading.rubric import load_rubric

RUBRIC = load_rubric()
CALLS = []


def fake_grade(entry, rubric):
    CALLS.append(entry.name)
    passed = entry.module is not None and "GOOD" in entry.module.read_text()
    items = tuple(ItemResult(i, i.points if passed else 0.0, "passed" if passed else "failed", "")
                  for i in rubric.items)
    return Grade(entry.name, rubric, items, "test")


@pytest.fixture
def subs(tmp_path):
    d = tmp_path / "subs"
    d.mkdir()
    for name, text in [("a", "GOOD"), ("b", "bad"), ("c", "GOOD"), ("d", "bad")]:
        (d / f"{name}.py").write_text(text)
    return collect(d, tmp_path / "work")


def test_every_entry_gets_all_files_and_the_summary(subs, tmp_path):
    out = tmp_path / "out"
    assert grade_all(subs, out, RUBRIC, fake_grade, progress=None) == 4
    for name in "abcd":
        assert {p.name for p in (out / name).iterdir()} == {"results.json", "report.md", "junit.xml", "grade.json"}
    grades = write_summary(out, RUBRIC)
    rows = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text())))
    assert [(r["submission"], r["score"]) for r in rows] == [("a", "100"), ("b", "0"), ("c", "100"), ("d", "0")]
    assert len(grades) == 4 and "4 submissions" in (out / "overview.md").read_text()


def test_resume_skips_graded_entries_unless_forced(subs, tmp_path):
    out = tmp_path / "out"
    grade_all(subs[:2], out, RUBRIC, fake_grade, progress=None)
    CALLS.clear()
    assert grade_all(subs, out, RUBRIC, fake_grade, progress=None) == 2
    assert CALLS == ["c", "d"]
    CALLS.clear()
    assert grade_all(subs, out, RUBRIC, fake_grade, progress=None, force=True) == 4


def test_a_stored_grade_is_reused_only_for_the_entry_that_earned_it(tmp_path):
    """A resumed run once handed a stored 100 to whoever owned the folder now: an entry named as another one's
    hashed folder ("Jose-24c2ab65b7.py" beside "José.py"), or a file changed since it was graded."""
    d = tmp_path / "subs"
    d.mkdir()
    (d / "José.py").write_text("GOOD")
    out = tmp_path / "out"
    grade_all(collect(d, tmp_path / "work"), out, RUBRIC, fake_grade, progress=None)
    (folder,) = [p.name for p in out.iterdir() if p.is_dir()]
    (d / f"{folder}.py").write_text("bad")  # a plain name, spelled as José's folder
    entries = collect(d, tmp_path / "work2")
    assert len({e.name for e in entries}) == 2 and folder in {e.name for e in entries}
    CALLS.clear()
    grade_all(entries, out, RUBRIC, fake_grade, progress=None)
    assert [e.name for e in entries if e.source.name != "José.py"] == CALLS  # the newcomer is graded, José kept
    by_source = {e.source.name: load_grade(out, e.name, RUBRIC).score for e in entries}
    assert by_source == {"José.py": 100, f"{folder}.py": 0}
    (d / "José.py").write_text("bad")  # changed since: graded again, not taken from its folder
    CALLS.clear()
    grade_all(collect(d, tmp_path / "work3"), out, RUBRIC, fake_grade, progress=None)
    assert [folder] == CALLS


def test_a_half_written_entry_is_regraded(subs, tmp_path):
    out = tmp_path / "out"
    grade_all(subs, out, RUBRIC, fake_grade, progress=None)
    (out / "b" / "grade.json").write_text("{not json")
    CALLS.clear()
    grade_all(subs, out, RUBRIC, fake_grade, progress=None)
    assert CALLS == ["b"]
    assert load_grade(out, "b", RUBRIC).score == 0


def test_shards_are_disjoint_cover_everything_and_merge(subs, tmp_path):
    out = tmp_path / "out"
    shards = [in_shard(subs, parse_shard(f"{i}/3")) for i in range(3)]
    assert sorted(e.name for s in shards for e in s) == ["a", "b", "c", "d"]
    for s in shards:
        grade_all(s, out, RUBRIC, fake_grade, progress=None)
    assert len(write_summary(out, RUBRIC)) == 4


@pytest.mark.parametrize("bad", ["3/3", "1", "a/b", "-1/2"])
def test_bad_shards_are_refused(bad):
    with pytest.raises(ValueError, match="shard"):
        parse_shard(bad)


def test_an_executor_gives_the_same_files_as_serial(subs, tmp_path):
    grade_all(subs, tmp_path / "serial", RUBRIC, fake_grade, progress=None)
    with ThreadPoolExecutor(2) as pool:
        grade_all(subs, tmp_path / "pool", RUBRIC, fake_grade, executor=pool, progress=None)
    for name in "abcd":
        assert (tmp_path / "serial" / name / "grade.json").read_bytes() == \
            (tmp_path / "pool" / name / "grade.json").read_bytes()


def test_a_dask_local_cluster_grades_like_serial(subs, tmp_path):
    """`--executor dask`: the grader codes against concurrent.futures.Executor; Dask provides one."""
    from contextlib import ExitStack

    pytest.importorskip("distributed", reason="Dask's distributed is not installed (pip install -e '.[dask]')")
    from conformance.grading.cli import dask_executor

    grade_all(subs, tmp_path / "serial", RUBRIC, fake_grade, progress=None)
    with ExitStack() as stack:
        executor = dask_executor(stack, 1, None)
        assert grade_all(subs, tmp_path / "dask", RUBRIC, fake_grade, executor=executor, progress=None) == 4
    for name in "abcd":
        assert (tmp_path / "serial" / name / "grade.json").read_bytes() == \
            (tmp_path / "dask" / name / "grade.json").read_bytes()


def broken_grade(entry, rubric):
    if entry.name == "b":
        raise RuntimeError("a bug in the grader")
    return fake_grade(entry, rubric)


def test_a_grader_bug_on_one_entry_loses_nothing_else(subs, tmp_path):
    out = tmp_path / "out"
    grade_all(subs, out, RUBRIC, broken_grade, progress=None)
    assert "a bug in the grader" in (out / "b" / "grader_error.txt").read_text()
    assert "not of your code" in (out / "b" / "results.json").read_text()
    assert not (out / "b" / "grade.json").exists()
    assert [g.submission for g in write_summary(out, RUBRIC)] == ["a", "c", "d"]
    CALLS.clear()
    grade_all(subs, out, RUBRIC, fake_grade, progress=None)
    assert CALLS == ["b"]


def test_an_entry_whose_folder_cannot_be_made_is_still_a_row_and_a_grader_error(subs, tmp_path):
    """Its grade cannot be written, nor its failure (the folder's name is taken by a file here; a full disk
    does the same): it is kept by the runner, listed in summary.csv, and the command exits 1."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "b").write_text("not a folder")
    lost = []
    grade_all(subs, out, RUBRIC, fake_grade, progress=None, lost=lost)
    assert [name for name, _ in lost] == ["b"] and "recording the failure failed" in lost[0][1]
    write_summary(out, RUBRIC, lost)
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}
    assert sorted(rows) == ["a", "b", "c", "d"] and rows["b"]["status"] == "grader error"


def test_the_exit_code_says_whether_every_entry_was_graded(tmp_path, monkeypatch):
    """0: every entry graded; 3: some could not be used (the student's to fix); 1: a grader error."""
    import argparse

    from conformance.grading import cli, judge

    monkeypatch.setattr(judge, "grade_one", fake_grade)
    monkeypatch.setattr(judge, "check_scope", lambda rubric: None)
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "a.py").write_text("GOOD")

    def run(out):
        return cli.main(argparse.Namespace(submissions=str(subs), out=str(tmp_path / out), jobs=1, rubric=None,
                                           profile=None, force=False, shard=None, executor="local",
                                           scheduler_address=None, policy=None))
    assert run("out1") == 0
    (subs / "broken.zip").write_bytes(b"PK\x03\x04 not really")
    assert run("out2") == 3
    monkeypatch.setattr(judge, "grade_one", broken_grade)
    (subs / "b.py").write_text("bad")
    assert run("out3") == 1


def dying_grade(entry, rubric):
    """Kills its own worker process on entry b, as the kernel's OOM killer would."""
    import os

    if entry.name == "b":
        os._exit(9)
    return fake_grade(entry, rubric)


def test_a_dead_pool_worker_is_replaced_and_only_its_entry_fails(subs, tmp_path):
    out = tmp_path / "out"
    grade_all(subs, out, RUBRIC, dying_grade, jobs=2, progress=None)
    write_summary(out, RUBRIC)
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}
    assert sorted(rows) == ["a", "b", "c", "d"]
    assert {n: r["status"] for n, r in rows.items()} == {"a": "graded", "b": "grader error", "c": "graded",
                                                         "d": "graded"}
    assert "worker died" in rows["b"]["cause"] and rows["b"]["score"] == ""
    assert rows["a"]["score"] == "100" and rows["c"]["score"] == "100"


def test_a_failure_to_write_one_entry_is_that_entrys_grader_error(subs, tmp_path):
    out = tmp_path / "out"
    (out / "c").mkdir(parents=True)
    (out / "c" / "report.md").mkdir()  # writing c's report fails, like a full disk would
    grade_all(subs, out, RUBRIC, fake_grade, progress=None)
    rows = {r["submission"]: r["status"] for r in csv.DictReader(io.StringIO(write_summary(out, RUBRIC) and
                                                                               (out / "summary.csv").read_text()))}
    assert rows == {"a": "graded", "b": "graded", "c": "grader error", "d": "graded"}
    assert "IsADirectoryError" in (out / "c" / "grader_error.txt").read_text()


def test_the_command_exits_non_zero_and_lists_every_entry_when_one_cannot_be_graded(tmp_path, monkeypatch):
    import argparse

    from conformance.grading import cli, judge

    d = tmp_path / "subs"
    d.mkdir()
    for name, text in [("a", "GOOD"), ("b", "bad")]:
        (d / f"{name}.py").write_text(text)
    (d / "notes.txt").write_text("not a submission")
    monkeypatch.setattr(judge, "grade_one", broken_grade)
    monkeypatch.setattr(judge, "check_scope", lambda rubric: None)
    args = argparse.Namespace(submissions=str(d), out=str(tmp_path / "out"), jobs=1, rubric=None, profile=None,
                              force=False, shard=None, executor="local", scheduler_address=None, policy=None)
    assert cli.main(args) == 1
    rows = {r["submission"]: r["status"] for r in csv.DictReader(io.StringIO((tmp_path / "out" / "summary.csv")
                                                                              .read_text()))}
    assert rows == {"a": "graded", "b": "grader error", "notes.txt": "not graded"}
    monkeypatch.setattr(judge, "grade_one", fake_grade)
    assert cli.main(args) == 3  # resumable: only b is graded again; notes.txt still cannot be used


def test_a_stored_grade_keeps_what_the_student_is_shown(tmp_path):
    """Resuming rebuilds reports from grade.json: the counterexample, its replay and the feedback must survive."""
    from conformance.grading.records import grade_from_json, grade_to_json

    items = tuple(ItemResult(i, 0.0, "failed", "out") for i in RUBRIC.items)
    g = Grade("e", RUBRIC, items, "test", ("preempt_to_tail",), ("a note",), ("beyond",),
              counterexample="| step | schedule() |", replay={"format": "schedcheck/trace", "steps": []},
              feedback="SyntaxError at `p07_scheduler.py:4`")
    assert grade_from_json(grade_to_json(g), RUBRIC) == g


def test_held_out_cases_are_refused_where_submissions_would_share_the_grader_s_uid(tmp_path, monkeypatch, capsys):
    """At the process-group level as a normal user a submission runs under the grader's uid: it could read the
    seed, its classmates and the grades. The grade refuses unless told (--same-uid)."""
    import argparse

    from conformance.grading import cli, judge
    from conformance.sandbox import isolation

    monkeypatch.setattr(judge, "grade_one", fake_grade)
    monkeypatch.setattr(judge, "check_scope", lambda rubric: None)
    monkeypatch.setenv("SCHEDCHECK_HELD_OUT_SEED", "5")
    monkeypatch.setattr(cli.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(isolation, "detect", lambda force=None: isolation.Isolation("process-group", False, True,
                                                                                     True, False))
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "a.py").write_text("GOOD")

    def run(out, same_uid):
        return cli.main(argparse.Namespace(submissions=str(subs), out=str(tmp_path / out), jobs=1, rubric=None,
                                           profile=None, force=False, shard=None, executor="local",
                                           scheduler_address=None, policy=None, same_uid=same_uid))
    assert run("refused", False) == 2
    assert "--same-uid" in capsys.readouterr().err and not (tmp_path / "refused").exists()
    assert run("told", True) == 0
    monkeypatch.setattr(isolation, "detect", lambda force=None: isolation.Isolation("namespaces", True, True, False,
                                                                                     True))
    assert run("namespaces", False) == 0


def test_one_at_a_time_the_grade_command_still_grades_in_a_worker_so_a_death_costs_one_entry(subs, tmp_path):
    """`schedcheck grade --jobs 1` (apart=True): a submission that makes its grading process die (a report that
    decodes to gigabytes, killed for memory) takes a worker, not the process that writes the class's results."""
    out = tmp_path / "out"
    grade_all(subs, out, RUBRIC, dying_grade, jobs=1, progress=None, apart=True)
    write_summary(out, RUBRIC)
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}
    assert {n: r["status"] for n, r in rows.items()} == {"a": "graded", "b": "grader error", "c": "graded",
                                                         "d": "graded"}
    assert "worker died" in rows["b"]["cause"]


def test_the_grade_command_with_jobs_1_grades_in_a_worker(tmp_path, monkeypatch):
    import argparse

    from conformance.grading import cli, judge

    monkeypatch.setattr(judge, "grade_one", dying_grade)
    monkeypatch.setattr(judge, "check_scope", lambda rubric: None)
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("a", "b", "c"):
        (subs / f"{name}.py").write_text("GOOD")
    out = tmp_path / "out"
    code = cli.main(argparse.Namespace(submissions=str(subs), out=str(out), jobs=1, rubric=None, profile=None,
                                       force=False, shard=None, executor="local", scheduler_address=None,
                                       policy=None))
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}
    assert code == 1 and {n: r["status"] for n, r in rows.items()} == {"a": "graded", "b": "grader error",
                                                                       "c": "graded"}
