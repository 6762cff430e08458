"""Grade a folder of submissions: in parallel, resumable, shardable; the parent writes every file.

Workers only compute Grade values (each one runs its submission in the sandbox, within one
budget per submission); this process writes OUT/<entry>/results.json, report.md, junit.xml,
grade.json and counterexample.json, then OUT/summary.csv and OUT/overview.md from what is on disk,
so shards graded on different machines merge by copying folders together. Whatever goes wrong
with one entry (its grading raises, its worker dies, its files cannot be written) is that entry's
"grader error", recorded with the cause; the rest of the class is graded and the run says so.
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from conformance.grading.collect import Entry
from conformance.grading.outputs import (
    Grade,
    dumps,
)
from conformance.grading.records import entry_identity, load_grade, write_grade
from conformance.grading.rubric import Rubric
from conformance.grading.warm import settle
from conformance.sandbox.budget import submission_budget
from conformance.sandbox.spawn import base_dir

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


@dataclass(frozen=True)
class GraderFailed:
    """Grading this entry failed (a grader bug, a dead worker, a full disk): never the class's failure."""

    submission: str
    error: str


def budget_for(rubric: Rubric) -> tuple[float, float]:
    """(CPU, wall) seconds for all sandboxed runs of one submission, scored or not.

    With the default run_seconds (600): 60 s of CPU (and 100 restarts, see conformance.sandbox.budget),
    where a correct submission needs a few seconds of CPU for the corpus and the exploration together;
    300 s of wall time is only a safety net, since where it cuts depends on the machine's load.
    """
    return rubric.limits.run_seconds / 10, rubric.limits.run_seconds / 2


@dataclass(frozen=True)
class Safe:
    """grade_one, made total and bounded: one budget per submission; an exception becomes a GraderFailed."""

    grade_one: GradeOne

    def __call__(self, entry: Entry, rubric: Rubric) -> Grade | GraderFailed:
        try:
            settle()
            cpu, wall = budget_for(rubric)
            with submission_budget(cpu, wall):
                return self.grade_one(entry, rubric)
        except BaseException:  # noqa: BLE001 - even a RecursionError or SystemExit is this entry's failure
            return GraderFailed(entry.name, traceback.format_exc(limit=8)[-4000:])


def write_failure(out: Path, f: GraderFailed) -> None:
    """A results.json that says the grader failed (no grade.json: the entry is regraded on the next run)."""
    d = out / f.submission
    d.mkdir(parents=True, exist_ok=True)
    (d / "grade.json").unlink(missing_ok=True)
    message = ("The grader failed on this submission. This is a fault of the grading run, not of your code; "
               "your instructor has the details and will regrade it.")
    (d / "results.json").write_text(dumps({"score": 0, "output": message, "output_format": "md", "tests": [],
                                           "extra_data": {"schedcheck": {"grader_error": f.error}}}))
    (d / "grader_error.txt").write_text(f.error)


class Recorder:
    """Writes each result as it arrives; a failure to write is recorded as that entry's grader error."""

    def __init__(self, out: Path, total: int, progress: TextIO | None, problems: dict[str, str],
                 lost: list[tuple[str, str]] | None = None, identities: dict[str, str] | None = None) -> None:
        self.out, self.total, self.progress, self.problems = out, total, progress, problems
        self.identities = identities or {}  # entry name -> entry_identity, stored with its grade
        self.lost = lost if lost is not None else []  # entries whose folder could not even take their failure
        self.done = self.failed = 0
        self.start = time.monotonic()

    def __call__(self, g: Grade | GraderFailed) -> None:
        self.done += 1
        try:
            if isinstance(g, GraderFailed):
                write_failure(self.out, g)
            else:
                write_grade(self.out, g, self.problems.get(g.submission, ""), self.identities.get(g.submission, ""))
        except Exception as e:  # noqa: BLE001 - a full disk or an odd name: this entry's failure only
            g = GraderFailed(g.submission, f"writing the results failed: {type(e).__name__}: {e}")
            try:  # the summary still lists it: no grade.json
                write_failure(self.out, g)
            except Exception as again:  # noqa: BLE001 - not even its folder: kept here, for the summary's rows
                self.lost.append((g.submission, f"{g.error}; then recording the failure failed: "
                                                f"{type(again).__name__}: {again}"))
        self.failed += isinstance(g, GraderFailed)
        _tick(self.progress, self.done, self.total, g, self.start)


def run_pool(todo: list[Entry], rubric: Rubric, safe: Safe, jobs: int, record: Recorder,
             make_pool: Callable[[], Executor]) -> None:
    """Grade `todo` with at most `jobs` entries in flight; a pool that breaks is replaced.

    Only the entries in flight when a worker died are suspects: they are graded again, and one that
    was in flight at two breaks is graded alone; if its worker dies alone it is that entry's grader error.
    """
    queue, suspects = list(todo), dict.fromkeys((e.name for e in todo), 0)
    while queue:
        pool = make_pool()
        flight: dict[Future[Grade | GraderFailed], Entry] = {}
        broken: list[Entry] = []
        try:
            while (queue or flight) and not broken:
                alone = bool(queue) and suspects[queue[0].name] >= 2
                while queue and len(flight) < (1 if alone else jobs) and not (flight and alone):
                    try:
                        flight[pool.submit(safe, queue[0], rubric)] = queue[0]
                    except BrokenProcessPool:  # it broke since the last wait: replace it, queue unchanged
                        break
                    queue.pop(0)
                    if alone:
                        break
                if not flight:
                    break
                finished, _ = wait(flight, return_when=FIRST_COMPLETED)
                for f in finished:
                    e = flight.pop(f)
                    try:
                        record(f.result())
                    except BrokenProcessPool:
                        broken.append(e)
                    except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be unpickled
                        record(GraderFailed(e.name, f"the grading worker failed: {exc!r}"))
            broken += list(flight.values())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        for e in broken:
            suspects[e.name] += 1
            if suspects[e.name] >= 2 and len(broken) == 1:
                record(GraderFailed(e.name, "the grading worker died while grading this entry alone (killed, "
                                            "perhaps for memory); the entry is regraded on the next run"))
            else:
                queue.insert(0, e)


def grade_all(entries: list[Entry], out: Path, rubric: Rubric, grade_one: GradeOne, jobs: int = 1,
              executor: Executor | None = None, force: bool = False, progress: TextIO | None = sys.stderr,
              warm: Callable[[Rubric], None] | None = None, lost: list[tuple[str, str]] | None = None,
              apart: bool = False) -> int:
    """Grade every entry not already graded with this rubric; return how many were graded now. An entry whose
    failure could not even be written to its folder is appended to `lost` (name, cause), never dropped.
    `apart`: grade in worker processes even one at a time (`schedcheck grade` always does): whatever a submission
    makes the grading process hold or do (a report that decodes to gigabytes, a crash of the interpreter), it is
    a worker that dies, and this process writes that entry's failure, the rest and the summary.

    Entries that could not be graded are in summary.csv with status "grader error" (see statuses()).
    `warm` makes the class's pure work before local worker processes are forked, so they inherit it
    (conformance.grading.warm); if it fails, each worker makes that work itself.
    """
    out.mkdir(parents=True, exist_ok=True)
    identities = {e.name: entry_identity(e) for e in entries}
    todo = [e for e in entries if force or load_grade(out, e.name, rubric, identities[e.name]) is None]
    skipped = len(entries) - len(todo)
    if progress and skipped:
        print(f"schedcheck grade: {skipped} already graded with this rubric, from the same files (use --force to "
              "regrade)", file=progress)
    record = Recorder(out, len(todo), progress, {e.name: e.problem for e in entries if e.problem}, lost, identities)
    safe = Safe(grade_one)
    if executor is not None:
        futures = {executor.submit(safe, e, rubric): e for e in todo}
        for f in futures:
            try:
                record(f.result())
            except Exception as exc:  # noqa: BLE001 - a lost remote worker: this entry's failure
                record(GraderFailed(futures[f].name, f"the grading worker failed: {exc!r}"))
    elif apart and todo or jobs > 1 and len(todo) > 1:
        base_dir()  # one folder for every worker's runs, removed when this process exits
        if warm is not None and jobs > 1 and len(todo) > 1:  # a lone worker makes what it needs as it goes
            with contextlib.suppress(Exception):  # only a head start: a worker redoes what is missing
                warm(rubric)
        run_pool(todo, rubric, safe, jobs, record, lambda: ProcessPoolExecutor(max_workers=jobs))
    else:
        for e in todo:
            record(safe(e, rubric))
    if record.failed and progress:
        print(f"schedcheck grade: the grader failed on {record.failed} entries (see <entry>/grader_error.txt); "
              "rerun to regrade them", file=progress)
    return len(todo)


def _tick(progress: TextIO | None, n: int, total: int, g: Grade | GraderFailed, start: float) -> None:
    if progress is None:
        return
    width = 24
    done = int(width * n / max(total, 1))
    bar = "#" * done + "." * (width - done)
    what = f"{g.score:g}/{g.rubric.total:g}" if isinstance(g, Grade) else "GRADER ERROR"
    print(f"\r[{bar}] {n}/{total} {time.monotonic() - start:6.1f}s  {g.submission}: {what}".ljust(100),
          end="\n" if n == total else "", file=progress, flush=True)
