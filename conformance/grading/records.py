"""What a grade leaves on disk, and the class files rebuilt from it.

OUT/<entry>/ holds results.json, report.md, junit.xml, counterexample.json and, written last,
grade.json: the record a resumed or merged run reads back instead of regrading. summary.csv,
overview.md and overview.html are rebuilt from those folders, so shards graded on different
machines merge by copying folders together.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path

from conformance.grading.collect import Entry
from conformance.grading.heldout import fingerprint, held_out_seed, submission_bytes
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
from conformance.viewer.dashboard import write_dashboard

NOT_GRADED = "not graded"  # the submission cannot be used (refused, missing, unreadable): the student's to fix
GRADER_ERROR = "grader error"  # the grader failed on the entry: the instructor's to look at, and to regrade
STATUSES = {"refused": NOT_GRADED}  # older records' words for the same statuses


def entry_identity(entry: Entry) -> str:
    """What a stored grade was made from: the entry's own name and what it submitted (a module's bytes, a wire
    folder's files), so a resumed run reuses a grade only for the very entry that earned it, never for another
    entry that came to own its result folder, nor for a submission changed since."""
    h = hashlib.sha256(os.fsencode(entry.source.name) + b"\0" + entry.problem.encode() + b"\0")
    try:
        h.update(submission_bytes(entry.module) if entry.module is not None else b"")
    except OSError as e:
        h.update(f"unreadable: {e.strerror}".encode())
    except Exception as e:  # noqa: BLE001 - made for every entry before any is graded: it must not stop the class
        h.update(f"unidentified: {type(e).__name__}".encode())  # (a file name that is not UTF-8 raised here)
    return h.hexdigest()


def grade_to_json(g: Grade, problem: str = "", identity: str = "") -> dict[str, object]:
    """The internal record of a grade, enough to rebuild the summary without regrading."""
    return {
        "format": "schedcheck/grade", "version": 1, "submission": g.submission, "entry_sha256": identity,
        "status": NOT_GRADED if problem else "graded", "cause": problem,
        "rubric_sha256": g.rubric.digest, "corpus": g.rubric.corpus, "policy": str(g.rubric.policy),
        "isolation": g.isolation,
        "held_out": held_out_fingerprint(g.rubric),
        "score": g.score, "diagnosis": list(g.diagnosis), "notes": list(g.notes),
        "exploration": list(g.exploration), "counterexample": g.counterexample, "replay": g.replay,
        "feedback": g.feedback,
        "items": [{"id": r.item.id, "score": r.score, "status": r.status, "output": r.output,
                   "vectors_run": r.vectors_run, "vectors_passed": r.vectors_passed,
                   "failed_checks": list(r.failed_checks)} for r in g.items],
    }


def held_out_fingerprint(rubric: Rubric) -> str | None:
    """Which held-out cases a grade was made with (a digest of the seed), or None without any."""
    if not rubric.held_out:
        return None
    return f"{rubric.held_out}:{fingerprint(held_out_seed()[0])}"


def grade_from_json(obj: dict[str, object], rubric: Rubric, identity: str | None = None) -> Grade | None:
    """A stored grade, or None when it was made with another rubric or, given the `identity` of the entry now in
    its place (entry_identity), for another entry (then it is regraded)."""
    if obj.get("rubric_sha256") != rubric.digest or obj.get("format") != "schedcheck/grade" or \
            obj.get("held_out") != held_out_fingerprint(rubric) or \
            (identity is not None and obj.get("entry_sha256") != identity):
        return None
    raw = obj.get("items")
    assert isinstance(raw, list)
    by_id = {i.id: i for i in rubric.items}
    items = tuple(ItemResult(by_id[r["id"]], float(r["score"]), r["status"], r["output"], r["vectors_run"],
                             r["vectors_passed"], tuple(r.get("failed_checks", ()))) for r in raw)
    replay = obj.get("replay")
    return Grade(str(obj["submission"]), rubric, items, str(obj["isolation"]),
                 tuple(obj.get("diagnosis", ())), tuple(obj.get("notes", ())),  # type: ignore[arg-type]
                 tuple(obj.get("exploration", ())),  # type: ignore[arg-type]
                 counterexample=str(obj.get("counterexample", "")),
                 replay=replay if isinstance(replay, dict) else None, feedback=str(obj.get("feedback", "")))


def load_grade(out: Path, name: str, rubric: Rubric, identity: str | None = None) -> Grade | None:
    path = out / name / "grade.json"
    try:
        return grade_from_json(json.loads(path.read_text()), rubric, identity)
    except (OSError, ValueError, KeyError, TypeError, AssertionError):
        return None


def write_grade(out: Path, g: Grade, problem: str = "", identity: str = "") -> None:
    """Write one submission's files; grade.json last, so a half-written folder is regraded on resume."""
    d = out / g.submission
    d.mkdir(parents=True, exist_ok=True)
    (d / "results.json").write_text(dumps(gradescope_results(g)))
    (d / "report.md").write_text(report_md(g))
    (d / "junit.xml").write_text(junit_xml(g))
    if g.replay is not None:
        (d / "counterexample.json").write_text(dumps(g.replay))
    (d / "grader_error.txt").unlink(missing_ok=True)
    (d / "grade.json").write_text(dumps(grade_to_json(g, problem, identity)))


def read_status(d: Path) -> tuple[str, str]:
    """(status, cause) of an entry folder: from grade.json, else its grader_error.txt."""
    try:
        obj = json.loads((d / "grade.json").read_text())
        status = str(obj.get("status", "graded"))
        return STATUSES.get(status, status), str(obj.get("cause", ""))
    except (OSError, ValueError, AttributeError):
        pass
    try:
        lines = (d / "grader_error.txt").read_text(errors="replace").strip().splitlines()
        return GRADER_ERROR, (lines[-1] if lines else "the grader failed on this entry")[:500]
    except OSError:
        return GRADER_ERROR, "no grade was written"


def inert(cell: str) -> str:
    """A CSV cell a spreadsheet shows as text: a leading =, +, - or @ would make it a formula."""
    return "'" + cell if cell[:1] in ("=", "+", "-", "@") else cell


def write_summary(out: Path, rubric: Rubric, lost: Sequence[tuple[str, str]] = ()) -> list[Grade]:
    """Rebuild summary.csv, overview.md and overview.html from every entry folder under `out`.

    summary.csv has a row per entry and a status column (graded, not graded, grader error) with its cause;
    an entry without a grade (a grader error) keeps its row with empty scores. The class statistics count
    graded entries only: a submission that could not be used is listed with its reason, not as a 0.
    """
    grades, failed = [], []
    for d in sorted(p for p in out.iterdir() if p.is_dir() and not p.is_symlink()):
        g = load_grade(out, d.name, rubric)
        if g is not None:
            grades.append(g)
        elif (d / "grader_error.txt").is_file():
            failed.append((d.name, read_status(d)[1]))
    failed += [(name, cause) for name, cause in lost if (name, cause) not in failed]  # no folder to read them from
    header = next(csv.reader(io.StringIO(summary_csv(grades[:1]), newline="")), None) if grades else None
    header = header or ["submission", "score", "max_score", *[i.id for i in rubric.items], "diagnosis", "isolation"]
    body: list[list[str]] = []
    for g in grades:  # one grade at a time, so each row is matched to its own folder, whatever its name holds
        row = list(csv.reader(io.StringIO(summary_csv([g]), newline="")))[1]
        body.append([inert(row[0]), *row[1:], *map(inert, read_status(out / g.submission))])
    body += [[inert(name), "", f"{rubric.total:g}", *[""] * (len(header) - 3), GRADER_ERROR, inert(cause)]
             for name, cause in failed]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*header, "status", "cause"])
    body.sort(key=lambda row: row[0])
    writer.writerows(body)
    (out / "summary.csv").write_text(buf.getvalue(), encoding="utf-8")
    kept = {g.submission: read_status(out / g.submission) for g in grades}
    not_graded = sorted((name, cause) for name, (status, cause) in kept.items() if status == NOT_GRADED)
    graded = [g for g in grades if kept[g.submission][0] != NOT_GRADED]
    (out / "overview.md").write_text(overview_md(graded, not_graded, failed), encoding="utf-8")
    write_dashboard(out, grades, failed, not_graded)
    return grades


def statuses(out: Path) -> dict[str, str]:
    """Every entry's status in OUT/summary.csv: graded, not graded or grader error."""
    rows = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text(errors="replace"), newline="")))
    return {r["submission"]: r["status"] for r in rows}
