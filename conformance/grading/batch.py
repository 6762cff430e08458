"""Grade a folder of submissions: in parallel, resumable, shardable; the parent writes every file.

Workers only compute Grade values (each one runs its submission in the sandbox);
this process writes OUT/<entry>/results.json, report.md, junit.xml, grade.json and
counterexample.json, then OUT/summary.csv and OUT/overview.md from what is on
disk, so shards graded on different machines merge by copying folders together.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from conformance.grading.collect import Entry
from conformance.grading.outputs import (
    Grade,
    ItemResult,
    dumps,
    gradescope_results,
    junit_xml,
    overview_md,
    report_md,
    summary_csv,
)
from conformance.grading.rubric import Rubric

GradeOne = Callable[[Entry, Rubric], Grade]


def parse_shard(text: str) -> tuple[int, int]:
    """'i/N' with 0 <= i < N."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like i/N (e.g. 0/4), got {text!r}") from None
    if not 0 <= i < n:
        raise ValueError(f"--shard {text}: need 0 <= i < N")
    return i, n


def in_shard(entries: Iterable[Entry], shard: tuple[int, int]) -> list[Entry]:
    """The entries of shard i of N: every N-th by name, so shards are disjoint and cover all."""
    i, n = shard
    return [e for k, e in enumerate(sorted(entries, key=lambda e: e.name)) if k % n == i]


def grade_to_json(g: Grade) -> dict[str, object]:
    """The internal record of a grade, enough to rebuild the summary without regrading."""
    return {
        "format": "schedcheck/grade", "version": 1, "submission": g.submission,
        "rubric_sha256": g.rubric.digest, "corpus": g.rubric.corpus, "isolation": g.isolation,
        "score": g.score, "diagnosis": list(g.diagnosis), "notes": list(g.notes),
        "exploration": list(g.exploration),
        "items": [{"id": r.item.id, "score": r.score, "status": r.status, "output": r.output,
                   "vectors_run": r.vectors_run, "vectors_passed": r.vectors_passed} for r in g.items],
    }


def grade_from_json(obj: dict[str, object], rubric: Rubric) -> Grade | None:
    """A stored grade, or None when it was made with another rubric (then it is regraded)."""
    if obj.get("rubric_sha256") != rubric.digest or obj.get("format") != "schedcheck/grade":
        return None
    raw = obj.get("items")
    assert isinstance(raw, list)
    by_id = {i.id: i for i in rubric.items}
    items = tuple(ItemResult(by_id[r["id"]], float(r["score"]), r["status"], r["output"], r["vectors_run"],
                             r["vectors_passed"]) for r in raw)
    return Grade(str(obj["submission"]), rubric, items, str(obj["isolation"]),
                 tuple(obj.get("diagnosis", ())), tuple(obj.get("notes", ())),  # type: ignore[arg-type]
                 tuple(obj.get("exploration", ())))  # type: ignore[arg-type]


def load_grade(out: Path, name: str, rubric: Rubric) -> Grade | None:
    path = out / name / "grade.json"
    try:
        return grade_from_json(json.loads(path.read_text()), rubric)
    except (OSError, ValueError, KeyError, TypeError, AssertionError):
        return None


def write_grade(out: Path, g: Grade) -> None:
    """Write one submission's files; grade.json last, so a half-written folder is regraded on resume."""
    d = out / g.submission
    d.mkdir(parents=True, exist_ok=True)
    (d / "results.json").write_text(dumps(gradescope_results(g)))
    (d / "report.md").write_text(report_md(g))
    (d / "junit.xml").write_text(junit_xml(g))
    if g.replay is not None:
        (d / "counterexample.json").write_text(dumps(g.replay))
    (d / "grade.json").write_text(dumps(grade_to_json(g)))


def write_summary(out: Path, rubric: Rubric) -> list[Grade]:
    """Rebuild summary.csv and overview.md from every grade.json under `out` made with `rubric`."""
    grades = [g for d in sorted(out.iterdir()) if d.is_dir() and (g := load_grade(out, d.name, rubric))]
    (out / "summary.csv").write_text(summary_csv(grades))
    (out / "overview.md").write_text(overview_md(grades))
    return grades


@dataclass(frozen=True)
class GraderFailed:
    """grade_one raised: a bug in the grader, not the submission's fault; the entry is regraded next run."""

    submission: str
    error: str


@dataclass(frozen=True)
class Safe:
    """grade_one, made total: an exception of the grader itself becomes a GraderFailed value."""

    grade_one: GradeOne

    def __call__(self, entry: Entry, rubric: Rubric) -> Grade | GraderFailed:
        try:
            return self.grade_one(entry, rubric)
        except Exception:
            return GraderFailed(entry.name, traceback.format_exc(limit=8))


def write_failure(out: Path, f: GraderFailed) -> None:
    """A results.json that says the grader failed (no grade.json: the entry is regraded on the next run)."""
    d = out / f.submission
    d.mkdir(parents=True, exist_ok=True)
    message = ("The grader failed on this submission. This is a bug in schedcheck, not in your code; "
               "your instructor has the details and will regrade it.")
    (d / "results.json").write_text(dumps({"score": 0, "output": message, "output_format": "md", "tests": [],
                                           "extra_data": {"schedcheck": {"grader_error": f.error}}}))
    (d / "grader_error.txt").write_text(f.error)


def grade_all(entries: list[Entry], out: Path, rubric: Rubric, grade_one: GradeOne, jobs: int = 1,
              executor: Executor | None = None, force: bool = False, progress: TextIO | None = sys.stderr) -> int:
    """Grade every entry not already graded with this rubric; return how many were graded now."""
    out.mkdir(parents=True, exist_ok=True)
    todo = [e for e in entries if force or load_grade(out, e.name, rubric) is None]
    skipped = len(entries) - len(todo)
    if progress and skipped:
        print(f"schedcheck grade: {skipped} already graded with this rubric (use --force to regrade)", file=progress)
    own = executor is None and jobs > 1 and len(todo) > 1
    pool = ProcessPoolExecutor(max_workers=jobs) if own else executor
    safe = Safe(grade_one)
    start = time.monotonic()
    failed = 0

    def record(n: int, g: Grade | GraderFailed) -> None:
        nonlocal failed
        if isinstance(g, GraderFailed):
            failed += 1
            write_failure(out, g)
        else:
            write_grade(out, g)
        _tick(progress, n, len(todo), g, start)

    try:
        if pool is None:
            for n, e in enumerate(todo, start=1):
                record(n, safe(e, rubric))
        else:
            futures: dict[Future[Grade | GraderFailed], Entry] = {pool.submit(safe, e, rubric): e for e in todo}
            for n, f in enumerate(as_completed(futures), start=1):
                try:
                    g = f.result()
                except Exception as exc:  # the worker itself died
                    g = GraderFailed(futures[f].name, f"the grading worker failed: {exc!r}")
                record(n, g)
    finally:
        if own and pool is not None:
            pool.shutdown(cancel_futures=True)
    if failed and progress:
        print(f"schedcheck grade: the grader failed on {failed} entries (see <entry>/grader_error.txt); "
              "rerun to regrade them", file=progress)
    return len(todo)


def _tick(progress: TextIO | None, n: int, total: int, g: Grade | GraderFailed, start: float) -> None:
    if progress is None:
        return
    width = 24
    done = int(width * n / total)
    bar = "#" * done + "." * (width - done)
    what = f"{g.score:g}/{g.rubric.total:g}" if isinstance(g, Grade) else "GRADER ERROR"
    print(f"\r[{bar}] {n}/{total} {time.monotonic() - start:6.1f}s  {g.submission}: {what}".ljust(100),
          end="\n" if n == total else "", file=progress, flush=True)
