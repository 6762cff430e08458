"""A counterexample as a Markdown step table for a student's report, from the sandboxed trace alone.

Per step: the submission's schedule() against the spec's, blocks_used, the queues
and update()'s result, with the spec's value beside the submission's where they
differ; the first divergence is marked and the spec's reasons for it follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.checks.checkers import Finding, expected_trace
from conformance.grading.escape import md, md_code
from conformance.reports.traces import left_out, shown_steps
from spec.trace import Workload, snapshot_to_json

MAX_ROWS = 30
MAX_IDS = 12  # sequence ids shown in one cell; a submission may return thousands
ID_LIMIT = 40  # characters of one id or value shown


def fmt_batch(batch: Any) -> str:
    """{a1: 6, a2: 2} in Markdown: every id and count (the submission's own values) escaped and bounded."""
    pairs = list(batch or [])
    shown = ", ".join(f"{md(p[0], ID_LIMIT)}: {md(p[1], ID_LIMIT)}" if isinstance(p, list | tuple) and len(p) == 2
                      else md(p, ID_LIMIT) for p in pairs[:MAX_IDS])
    return "{" + shown + (", …" if len(pairs) > MAX_IDS else "") + "}"


def fmt_ids(ids: Any) -> str:
    """[a1, a2] in Markdown: every id escaped and bounded."""
    items = list(ids or [])
    return "[" + ", ".join(md(i, ID_LIMIT) for i in items[:MAX_IDS]) + (", …" if len(items) > MAX_IDS else "") + "]"


def _cell(got: str, want: str) -> str:
    return got if got == want else f"**{got}** (spec {want})"


def _show(key: str, value: Any) -> str:
    return md(value, ID_LIMIT) if key == "blocks_used" else fmt_ids(value)


def markdown_table(w: Workload, observed: dict[str, Any], finding: Finding | None, source: str) -> str:
    """The submission's run of `w` beside the spec's, step by step, with the first divergence and its reasons."""
    c = w.config
    spec = expected_trace(w).steps
    lines = [f"Case {md_code(source, 120)}: num_blocks={c.num_blocks} block_size={c.block_size} "
             f"max_num_seqs={c.max_num_seqs} max_num_batched_tokens={c.max_num_batched_tokens} eos={c.eos}; requests "
             + ", ".join(f"{r.seq_id}(prompt_len={r.prompt_len}, max_tokens={r.max_tokens}"
                         + (f", arrives at step {r.arrival})" if r.arrival > 1 else ")") for r in w.requests), ""]
    if finding is not None:
        where = (f"step {md(finding.step, 20)} {md(finding.call, 40)}() "
                 f"\\[{md(finding.check, 40)} {md(finding.rule, 40)}\\]")
        lines += [f"**First divergence, {where}:** {md(finding.message)}", ""]
    lines += ["| step | schedule() | blocks_used | waiting | running | finished |", "|---|---|---|---|---|---|"]
    steps = observed["steps"]
    total = max(len(steps), len(spec))
    shown = shown_steps(total, finding.step if finding is not None else None)
    for j, k in enumerate(shown):
        if k is None:
            a, b = left_out(shown, j, total)
            lines.append(f"| … | steps {a} to {b} left out ({b - a + 1} steps) | | | | |")
            continue
        i = k - 1
        got = steps[i] if i < len(steps) else {}
        want = spec[i] if i < len(spec) else None
        want_snap: Mapping[str, Any] = snapshot_to_json(want.after_update) if want else {}
        got_snap = got.get("after_update") or {}
        mark = " ◀" if finding is not None and finding.step == i + 1 else ""
        cells = [_cell(fmt_batch(got.get("schedule") or []) if got else "-",
                       fmt_batch(want.batch) if want else "-")]
        for key in ("blocks_used", "waiting", "running"):
            g, s = got_snap.get(key), want_snap.get(key)
            cells.append(_cell(_show(key, g), _show(key, s)) if key in got_snap else "?")
        cells.append(_cell(fmt_ids(got.get("finished") or []), fmt_ids(list(want.finished) if want else [])))
        lines.append(f"| {i + 1}{mark} | " + " | ".join(cells) + " |")
    if finding is not None and finding.explanation:
        lines += ["", f"What the spec does at step {finding.step}:", ""]
        lines += [f"- {md(e)}" for e in list(finding.explanation)[:MAX_ROWS]]
    if any(s.get("after_update") is None for s in steps):
        lines += ["", "(`?`: the submission's white-box attributes could not be read; black-box columns only.)"]
    return "\n".join(lines)
