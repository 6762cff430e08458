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
from xml.sax.saxutils import escape, quoteattr

from conformance.grading.rubric import VISIBILITIES, Item, Rubric

STATUSES = ("passed", "failed", "timeout", "crashed")  # crashed: the submission died; timeout: over its limit
OUTPUT_CAP = 20_000  # characters of one test's output shown to a student


@dataclass(frozen=True, slots=True)
class ItemResult:
    item: Item
    score: float
    status: str  # one of STATUSES
    output: str  # Markdown for the student
    vectors_run: int = 0
    vectors_passed: int = 0


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
    execution_seconds: float = field(default=0.0, compare=False)

    @property
    def score(self) -> float:
        return round(sum(r.score for r in self.items), 2)


def _cap(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return text
    return text[:OUTPUT_CAP] + f"\n\n*(output truncated: {len(text) - OUTPUT_CAP} more characters)*"


def gradescope_results(g: Grade, stable: bool = False) -> dict[str, object]:
    """The Gradescope results.json object (autograder specification: score, tests[], output formats)."""
    tests = []
    for n, r in enumerate(g.items, start=1):
        tests.append({
            "name": r.item.name, "number": str(n), "score": round(r.score, 2), "max_score": r.item.points,
            "status": "passed" if r.status == "passed" else "failed", "output": _cap(r.output),
            "output_format": "md", "visibility": r.item.visibility, "tags": [r.item.id, r.status],
        })
    result: dict[str, object] = {
        "score": g.score, "output": _cap(summary_md(g)), "output_format": "md", "test_output_format": "md",
        "visibility": "visible", "stdout_visibility": "hidden", "tests": tests,
        "extra_data": {"schedcheck": {"corpus": g.rubric.corpus, "rubric_sha256": g.rubric.digest,
                                      "isolation": g.isolation, "diagnosis": list(g.diagnosis)}},
    }
    if not stable:
        result["execution_time"] = int(round(g.execution_seconds))
    return result


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


def summary_md(g: Grade) -> str:
    """The short text at the top of a student's results: score, per item, diagnosis."""
    lines = [f"**{g.score:g} / {g.rubric.total:g}** on corpus `{g.rubric.corpus}`", ""]
    lines += ["| item | score | status |", "|---|---|---|"]
    lines += [f"| {r.item.name} | {r.score:g} / {r.item.points:g} | {r.status} |" for r in g.items]
    if g.diagnosis:
        lines += ["", "Behaves like a known bug: " + "; ".join(g.diagnosis)]
    if g.notes:
        lines += ["", *[f"- note: {n}" for n in g.notes]]
    return "\n".join(lines)


def report_md(g: Grade) -> str:
    """The student's full report: the summary, each item's findings, the counterexample, exploration."""
    parts = [f"# schedcheck report: {g.submission}", "", summary_md(g), "",
             f"Isolation in force: `{g.isolation}`. Rubric sha256 `{g.rubric.digest[:12]}`."]
    for r in g.items:
        parts += ["", f"## {r.item.name}: {r.score:g} / {r.item.points:g} ({r.status})", "", r.output or "All passed."]
    if g.counterexample:
        parts += ["", "## First counterexample", "", g.counterexample]
        if g.replay is not None:
            parts += ["", "Replay it: `schedcheck replay counterexample.json p07_scheduler.py`"]
    if g.exploration:
        label = "counted in the score" if g.rubric.explore_counts else "not counted in the score"
        parts += ["", f"## Beyond the corpus ({label})", "", *[f"- {x}" for x in g.exploration]]
    return "\n".join(parts) + "\n"


def junit_xml(g: Grade) -> str:
    """JUnit XML (xunit2 shape): one testcase per rubric item; failure = wrong behaviour, error = crash/timeout."""
    failures = sum(r.status == "failed" for r in g.items)
    errors = sum(r.status in ("timeout", "crashed") for r in g.items)
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<testsuites>",
             f"  <testsuite name={quoteattr('schedcheck.' + g.submission)} tests=\"{len(g.items)}\" "
             f'failures="{failures}" errors="{errors}" skipped="0">']
    for r in g.items:
        head = f"    <testcase classname={quoteattr('schedcheck.' + g.submission)} name={quoteattr(r.item.id)}"
        if r.status == "passed":
            lines.append(head + "/>")
            continue
        tag = "failure" if r.status == "failed" else "error"
        message = f"{r.score:g} / {r.item.points:g}: {r.status}"
        lines += [head + ">", f"      <{tag} message={quoteattr(message)} type={quoteattr(r.status)}>"
                  f"{escape(r.output)}</{tag}>", "    </testcase>"]
    lines += ["  </testsuite>", "</testsuites>"]
    return "\n".join(lines) + "\n"


def summary_csv(grades: Sequence[Grade]) -> str:
    """One row per submission, one column per rubric item."""
    items = [i.id for i in grades[0].rubric.items] if grades else []
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["submission", "score", "max_score", *items, "diagnosis", "isolation"])
    for g in sorted(grades, key=lambda g: g.submission):
        by_id = {r.item.id: r.score for r in g.items}
        w.writerow([g.submission, f"{g.score:g}", f"{g.rubric.total:g}", *[f"{by_id.get(i, 0):g}" for i in items],
                    "; ".join(g.diagnosis), g.isolation])
    return buf.getvalue()


def overview_md(grades: Sequence[Grade]) -> str:
    """The class overview: score distribution, pass rate per rubric item, the most common diagnosed bugs."""
    if not grades:
        return "# schedcheck: class overview\n\nNo submissions were graded.\n"
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
        lines.append(f"| {item.name} | {passed}/{len(results)} | {mean:.1f} / {item.points:g} |")
    bugs = Counter(b for g in grades for b in g.diagnosis)
    lines += ["", "## Most common diagnosed bugs", ""]
    lines += [f"- {name}: {count}" for name, count in sorted(bugs.items(), key=lambda kv: (-kv[1], kv[0]))] or \
        ["- none diagnosed"]
    return "\n".join(lines) + "\n"


def dumps(obj: object) -> str:
    """JSON as written to disk: sorted keys, so equal grades give identical bytes."""
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
