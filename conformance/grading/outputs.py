"""What grading writes: Gradescope results.json, a Markdown report, JUnit XML, and the class summary.

Everything here is a pure function of Grade values, so the same grades give
byte-identical files; the only time-dependent field (execution_time) is kept
out of the determinism contract and can be dropped with stable=True.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from conformance.grading.escape import (
    csv_cell,
    cut,
    label,
    md,
    md_cell,
    md_code,
    utf8_json,
    visible,
    xml_attr,
    xml_text,
)
from conformance.grading.rubric import VISIBILITIES, Item, Rubric
from spec.model import DEFAULT_POLICY

# crashed: the submission died on a case; timeout: over its limit; not submitted: no p07_scheduler.py;
# does not load: importing it failed, so nothing ran
STATUSES = ("passed", "failed", "timeout", "crashed", "not submitted", "does not load")
ERRORS = ("timeout", "crashed", "not submitted", "does not load")  # JUnit <error>: nothing was judged
# An item has one status (ItemResult.status, set by scoring); every output shows that word: report.md's rows and
# headings, results.json's tags and the first line of a test's output (Gradescope's own field says only passed or
# failed: gradescope_status), JUnit's element type, and the dashboard's pass rates (passed or not).
OUTPUT_CAP = 20_000  # characters of one test's output shown to a student
SHOWN_NOW = ("visible",)  # visibilities a student sees before the due date and before grades are published


@dataclass(frozen=True, slots=True)
class ItemResult:
    item: Item
    score: float
    status: str  # one of STATUSES
    output: str  # Markdown for the student
    vectors_run: int = 0
    vectors_passed: int = 0
    failed_checks: tuple[str, ...] = ()  # the checks blamed for its failing cases, sorted (as `check` names them)


@dataclass(frozen=True, slots=True)
class Grade:
    submission: str  # the entry name in the submissions folder
    rubric: Rubric
    items: tuple[ItemResult, ...]
    isolation: str  # the sandbox isolation level in force
    diagnosis: tuple[str, ...] = ()  # catalog bugs whose behaviour the submission reproduces exactly
    notes: tuple[str, ...] = ()  # e.g. "white-box checks skipped: no attribute 'blocks_used'"
    exploration: tuple[str, ...] = ()  # findings beyond the corpus, labelled as such
    counterexample: str = ""  # the first counterexample, as a Markdown step table
    replay: dict[str, object] | None = None  # the first counterexample as a replayable trace
    feedback: str = ""  # Markdown shown above the summary: a load error at its line, what to rename
    execution_seconds: float = field(default=0.0, compare=False)

    @property
    def score(self) -> float:
        return round(sum(r.score for r in self.items), 2)

    @property
    def shown(self) -> tuple[ItemResult, ...]:
        """The items a student sees from the start (visibility "visible")."""
        return tuple(r for r in self.items if r.item.visibility in SHOWN_NOW)


def _cap(text: str) -> str:
    """Markdown for a rendered field, bounded; a last guard: no control character or surrogate gets through."""
    if len(text) > OUTPUT_CAP:
        text = text[:OUTPUT_CAP] + f"\n\n*(output truncated: {len(text) - OUTPUT_CAP} more characters)*"
    return visible(text, keep="\n")


def gradescope_results(g: Grade, stable: bool = False) -> dict[str, object]:
    """The Gradescope results.json object (autograder specification: score, tests[], output formats).

    `score` is the whole grade. Gradescope hides a student's total while any test is held back
    (after_due_date, after_published) and shows it with `hidden` tests, which is why the rubric
    gives `hidden` items no points. The visible `output` names only visible items (summary_md).
    """
    tests = []
    for n, r in enumerate(g.items, start=1):
        status = gradescope_status(r.status)
        shown = "" if status == r.status else f"Status: **{r.status}**.\n\n"  # the word Gradescope cannot show
        tests.append({
            "name": r.item.name, "number": str(n), "score": round(r.score, 2), "max_score": r.item.points,
            "status": status, "output": _cap(shown + r.output),
            "output_format": "md", "visibility": r.item.visibility, "tags": [r.item.id, r.status],
        })
    result: dict[str, object] = {
        "score": g.score, "output": _cap(summary_md(g, student=True)), "output_format": "md",
        "test_output_format": "md",
        "visibility": "visible", "stdout_visibility": "hidden", "tests": tests,
        "extra_data": {"schedcheck": {"corpus": g.rubric.corpus, "rubric_sha256": g.rubric.digest,
                                      "policy": str(g.rubric.policy),
                                      "isolation": g.isolation, "diagnosis": list(g.diagnosis)}},
    }
    if not stable:
        result["execution_time"] = int(round(g.execution_seconds))
    return result


def gradescope_status(status: str) -> str:
    """Gradescope's test status for an item's status: it knows passed and failed only."""
    return "passed" if status == "passed" else "failed"


def validate_gradescope(obj: object) -> list[str]:
    """Problems with a results.json object against Gradescope's specification; empty when valid."""
    out: list[str] = []
    if not isinstance(obj, dict):
        return ["results.json must be a JSON object"]
    formats = ("text", "html", "simple_format", "md", "ansi")
    if "score" in obj and (isinstance(obj["score"], bool) or not isinstance(obj["score"], int | float)):
        out.append(f"score must be a number, got {obj['score']!r}")
    for key in ("output_format", "test_output_format", "test_name_format"):
        if key in obj and obj[key] not in formats:
            out.append(f"{key} is {obj[key]!r}")
    for key in ("visibility", "stdout_visibility"):
        if key in obj and obj[key] not in VISIBILITIES:
            out.append(f"{key} is {obj[key]!r}")
    if "execution_time" in obj and type(obj["execution_time"]) is not int:
        out.append("execution_time must be an int")
    tests = obj.get("tests", [])
    if not isinstance(tests, list):
        return out + ["tests must be a list"]
    if "score" not in obj and any("score" not in t for t in tests if isinstance(t, dict)):
        out.append("score is required unless every test has one")
    for i, t in enumerate(tests):
        if not isinstance(t, dict):
            out.append(f"tests[{i}] must be an object")
            continue
        for key in ("score", "max_score"):
            if key in t and (isinstance(t[key], bool) or not isinstance(t[key], int | float)):
                out.append(f"tests[{i}].{key} must be a number")
        if "status" in t and t["status"] not in ("passed", "failed"):
            out.append(f"tests[{i}].status is {t['status']!r}")
        if "visibility" in t and t["visibility"] not in VISIBILITIES:
            out.append(f"tests[{i}].visibility is {t['visibility']!r}")
        if "output_format" in t and t["output_format"] not in formats:
            out.append(f"tests[{i}].output_format is {t['output_format']!r}")
        for key in ("name", "output", "number"):
            if key in t and not isinstance(t[key], str):
                out.append(f"tests[{i}].{key} must be a string")
        if "tags" in t and not (isinstance(t["tags"], list) and all(isinstance(x, str) for x in t["tags"])):
            out.append(f"tests[{i}].tags must be a list of strings")
    return out


def summary_md(g: Grade, student: bool = False) -> str:
    """The short text at the top of the results: score, per item, diagnosis, notes.

    For a student (results.json's visible `output`) only visible items appear, and the total only
    when every item is visible: a held-back item's score must not be readable from a row or by
    subtracting the visible ones from the total.
    """
    rows = g.shown if student else g.items
    held = len(g.items) - len(rows)
    if held:
        shown = round(sum(r.score for r in rows), 2)
        head = (f"**{shown:g} / {sum(r.item.points for r in rows):g}** on the items shown now; {held} more "
                f"item(s) are shown later (after the due date or once grades are published).")
    else:
        head = f"**{g.score:g} / {g.rubric.total:g}**"
    lines = [f"{head} Corpus `{g.rubric.corpus}`.", ""]
    if g.feedback:
        lines += [g.feedback, ""]
    lines += ["| item | score | status |", "|---|---|---|"]
    lines += [f"| {md_cell(r.item.name)} | {r.score:g} / {r.item.points:g} | {r.status} |" for r in rows]
    if g.diagnosis and (not student or any(r.status != "passed" for r in rows)):
        lines += ["", "Behaves like a known bug: " + "; ".join(cut(d, 600) for d in g.diagnosis)]  # the catalog's
    if g.notes and not g.feedback:
        lines += ["", *[f"- note: {md(n)}" for n in g.notes]]
    return "\n".join(lines)


def report_md(g: Grade) -> str:
    """The student's full report: the summary, each item's findings, the counterexample, exploration."""
    parts = [f"# schedcheck report: {md(g.submission)}", "", summary_md(g), "",
             f"Isolation in force: {md_code(g.isolation, 60)}. Rubric sha256 `{g.rubric.digest[:12]}`." +
             ("" if g.rubric.policy == DEFAULT_POLICY else f" Judged under policy `{g.rubric.policy}`.")]
    for r in g.items:
        parts += ["", f"## {md_cell(r.item.name)}: {r.score:g} / {r.item.points:g} ({r.status})", "",
                  r.output or "All passed."]
    if g.counterexample:  # with the command that replays counterexample.json (feedback.first_counterexample_md)
        parts += ["", "## First counterexample", "", g.counterexample]
    if g.exploration:
        label = "counted in the score" if g.rubric.explore_counts else "not counted in the score"
        parts += ["", f"## Beyond the corpus ({label})", "", *[f"- {md(x, 600)}" for x in g.exploration]]
    return visible("\n".join(parts), keep="\n") + "\n"


def junit_xml(g: Grade) -> str:
    """JUnit XML (xunit2 shape): one testcase per rubric item; failure = wrong behaviour, error = nothing judged."""
    failures = sum(r.status == "failed" for r in g.items)
    errors = sum(r.status in ERRORS for r in g.items)
    suite = xml_attr("schedcheck." + label(g.submission))
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<testsuites>",
             f'  <testsuite name={suite} tests="{len(g.items)}" failures="{failures}" errors="{errors}" skipped="0">']
    for r in g.items:
        head = f"    <testcase classname={suite} name={xml_attr(r.item.id)}"
        if r.status == "passed":
            lines.append(head + "/>")
            continue
        tag = "failure" if r.status == "failed" else "error"
        message = f"{r.score:g} / {r.item.points:g}: {r.status}"
        lines += [head + ">", f"      <{tag} message={xml_attr(message)} type={xml_attr(r.status)}>"
                  f"{xml_text(r.output, OUTPUT_CAP)}</{tag}>", "    </testcase>"]
    lines += ["  </testsuite>", "</testsuites>"]
    return "\n".join(lines) + "\n"


def summary_csv(grades: Sequence[Grade]) -> str:
    """One row per submission, one column per rubric item; every field quoted and passed through csv_cell.

    A name may hold any character: csv_cell shows controls as escapes (so no row is split and the
    reader never meets a bare CR) and makes a leading =, +, -, @ inert for spreadsheets.
    """
    items = [i.id for i in grades[0].rubric.items] if grades else []
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    w.writerow(["submission", "score", "max_score", *items, "diagnosis", "isolation"])
    for g in sorted(grades, key=lambda g: g.submission):
        by_id = {r.item.id: r.score for r in g.items}
        row = [g.submission, f"{g.score:g}", f"{g.rubric.total:g}", *[f"{by_id.get(i, 0):g}" for i in items],
               "; ".join(g.diagnosis), g.isolation]
        w.writerow([csv_cell(c) for c in row])
    return buf.getvalue()


def overview_md(grades: Sequence[Grade], not_graded: Sequence[tuple[str, str]] = (),
                failed: Sequence[tuple[str, str]] = ()) -> str:
    """The class overview: score distribution, pass rate per rubric item, the most common diagnosed bugs; then
    the entries that were not graded (the submission cannot be used) and the grader's own errors, with reasons."""
    tail = _unscored_md("Not graded (the submission cannot be used)", not_graded) + \
        _unscored_md("Grader errors (the grader failed; regrade them)", failed)
    if not grades:
        return "# schedcheck: class overview\n\nNo submissions were graded.\n" + tail
    total = grades[0].rubric.total or 1.0
    lines = ["# schedcheck: class overview", "", f"{len(grades)} submissions, corpus `{grades[0].rubric.corpus}`.",
             "", "## Score distribution", "", "| score | submissions |", "|---|---|"]
    bins = Counter(min(int(10 * g.score / total), 9) for g in grades)
    for b in range(9, -1, -1):
        lo, hi = b * 10, b * 10 + 10
        lines.append(f"| {lo}-{hi}% | {'#' * bins[b]} {bins[b]} |")
    lines += ["", "## Pass rate per rubric item", "", "| item | passed | mean score |", "|---|---|---|"]
    for n, item in enumerate(grades[0].rubric.items):
        results = [g.items[n] for g in grades if n < len(g.items)]
        passed = sum(r.status == "passed" for r in results)
        mean = sum(r.score for r in results) / len(results)
        lines.append(f"| {md_cell(item.name)} | {passed}/{len(results)} | {mean:.1f} / {item.points:g} |")
    bugs = Counter(b for g in grades for b in g.diagnosis)
    lines += ["", "## Most common diagnosed bugs", ""]
    ranked = sorted(bugs.items(), key=lambda kv: (-kv[1], kv[0]))
    lines += [f"- {md_cell(name)}: {count}" for name, count in ranked] or ["- none diagnosed"]
    return "\n".join(lines) + "\n" + tail


def _unscored_md(title: str, entries: Sequence[tuple[str, str]]) -> str:
    """A section of entries without a score, one line each with its reason (empty when there are none)."""
    if not entries:
        return ""
    return "\n".join(["", f"## {title}", "", *[f"- {md_cell(name)}: {md_cell(why)}" for name, why in entries]]) + "\n"


def dumps(obj: object) -> str:
    """JSON as written to disk: sorted keys, so equal grades give identical bytes.

    Never fails on a string: a lone surrogate (an undecodable file name, a message from the sandbox)
    is written as its \\u escape, so the text is valid UTF-8 and decodes back to the same string.
    """
    return utf8_json(json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False)) + "\n"
