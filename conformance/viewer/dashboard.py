"""The class at a glance: ``overview.html`` beside summary.csv, and one viewer page per student.

Plots are inline SVG drawn here, so the page needs no network and no plotting
library. Everything a submission controls (names, messages) is escaped.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from conformance.viewer.page import esc, render_page, shown
from spec.errors import SpecError
from spec.trace import workload_from_json

STUDENT_PAGE = "report.html"  # written in each student's folder, linked from the overview


def histogram_svg(scores: Sequence[float], total: float, bins: int = 10) -> str:
    """Bars of how many submissions scored in each tenth of the total."""
    counts = [0] * bins
    for s in scores:
        counts[min(int(bins * s / (total or 1.0)), bins - 1)] += 1
    top = max(counts) or 1
    width, height, bar = 520, 180, 44
    parts = [f'<svg class="hist" role="img" aria-label="score histogram" width="{width}" height="{height + 50}" '
             f'viewBox="0 0 {width} {height + 50}">']
    for i, c in enumerate(counts):
        h = round(height * c / top)
        x = 10 + i * (bar + 6)
        parts.append(f'<rect class="bar" data-bin="{i}" data-count="{c}" x="{x}" y="{height - h + 20}" '
                     f'width="{bar}" height="{h}"><title>{i * 100 // bins}-{(i + 1) * 100 // bins}%: {c}</title>'
                     "</rect>")
        parts.append(f'<text x="{x + bar / 2}" y="{height + 36}" text-anchor="middle">{i * 100 // bins}%</text>')
        if c:
            parts.append(f'<text x="{x + bar / 2}" y="{height - h + 14}" text-anchor="middle">{c}</text>')
    parts.append("</svg>")
    return "".join(parts)


def rate_bar(passed: int, total: int) -> str:
    pct = 100 * passed / total if total else 0.0
    return (f'<span class="rate" role="img" aria-label="{passed} of {total}"><span style="width:{pct:.0f}%">'
            f"</span></span> {passed}/{total}")


def student_page(grade: Any) -> str | None:
    """A student's counterexample in the viewer, or None when there is none to show."""
    replay = getattr(grade, "replay", None)
    if not isinstance(replay, dict):
        return None
    try:
        workload = workload_from_json(replay)
    except SpecError:
        return None
    finding = replay.get("finding") if isinstance(replay.get("finding"), dict) else None
    return render_page(workload, None, title=f"{grade.submission}: counterexample", finding=finding)


def overview_html(grades: Sequence[Any], failures: Sequence[tuple[str, str]] = (), links: bool = True,
                  not_graded: Sequence[tuple[str, str]] = ()) -> str:
    """The whole class: histogram, pass rates per rubric item, submissions by diagnosed bug, then the entries
    not graded (the submission cannot be used: the student's to fix) and the grader errors (the grader's own)."""
    unused = {name for name, _ in not_graded}
    grades = [g for g in grades if g.submission not in unused]
    total = grades[0].rubric.total if grades else 0.0
    scores = [g.score for g in grades]
    head = (f"{len(grades)} graded" + (f", {len(not_graded)} not graded" if not_graded else "") +
            (f", {len(failures)} grader errors" if failures else "") +
            (f"; mean {statistics.mean(scores):.1f}, median {statistics.median(scores):.1f} of {total:g}"
             if scores else ""))
    items = []
    if grades:
        for n, item in enumerate(grades[0].rubric.items):
            results = [g.items[n] for g in grades if n < len(g.items)]
            passed = sum(r.status == "passed" for r in results)
            items.append(f"<tr><td>{esc(item.name)}</td><td>{rate_bar(passed, len(results))}</td></tr>")
    by_bug: dict[str, list[str]] = {}
    for g in grades:
        if g.score >= total:
            bugs: tuple[str, ...] = ("(full marks)",)
        else:
            bugs = tuple(g.diagnosis) or ("(no known bug matches)",)
        for bug in bugs:
            by_bug.setdefault(bug, []).append(g.submission)
    groups = "".join(f"<li><b>{esc(bug)}</b> ({len(names)}): {', '.join(_link(n, links) for n in sorted(names))}</li>"
                     for bug, names in sorted(by_bug.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    rows = "".join(f"<tr><td>{_link(g.submission, links)}</td><td>{g.score:g}</td>"
                   f"<td>{esc(', '.join(g.diagnosis))}</td><td>{esc(g.isolation)}</td></tr>"
                   for g in sorted(grades, key=lambda g: g.submission))
    errors = "".join(f"<li><b>{esc(name)}</b>: <pre>{shown(why)}</pre></li>" for name, why in failures)
    unusable = "".join(f"<li><b>{esc(name)}</b>: <pre>{shown(why)}</pre></li>" for name, why in not_graded)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>schedcheck &middot; class overview</title>
<style>{(Path(__file__).parent / "dashboard.css").read_text()}</style></head><body>
<h1>Class overview</h1><p class="head">{esc(head)}</p>
<h2>Scores</h2>{histogram_svg(scores, total)}
<h2>Pass rate per rubric item</h2><table class="items"><tbody>{"".join(items)}</tbody></table>
<h2>Submissions by diagnosed bug</h2><ul class="bugs">{groups}</ul>
<h2>Not graded: the submission cannot be used</h2>{f'<ul class="errors">{unusable}</ul>' if unusable else
                                                     '<p>None.</p>'}
<h2>Grader errors: the grader failed, regrade them</h2>{f'<ul class="errors">{errors}</ul>' if errors else
                                                       '<p>None.</p>'}
<h2>Every submission</h2><table class="subs"><thead><tr><th>submission</th><th>score</th><th>diagnosis</th>
<th>isolation</th></tr></thead><tbody>{rows}</tbody></table>
</body></html>
"""


def _link(name: str, links: bool) -> str:
    if not links:
        return esc(name)
    return f'<a href="./{esc(quote(name))}/{STUDENT_PAGE}">{esc(name)}</a>'  # relative, whatever the name holds


def write_dashboard(out: Path, grades: Sequence[Any], failures: Sequence[tuple[str, str]] = (),
                    not_graded: Sequence[tuple[str, str]] = ()) -> None:
    """Write overview.html and each student's report.html (their counterexample in the viewer)."""
    for g in grades:
        page = student_page(g)
        target = out / g.submission / STUDENT_PAGE
        if page is not None:
            target.write_text(page)
        elif target.exists():
            target.unlink()
    (out / "overview.html").write_text(overview_html(grades, failures, not_graded=not_graded))

