"""A counterexample as a Markdown step table for a student's report, from the sandboxed trace alone.

Per step: the submission's schedule() against the spec's, blocks_used, the queues
and update()'s result, with the spec's value beside the submission's where they
differ; the first divergence is marked and the spec's reasons for it follow.
"""

from __future__ import annotations

from typing import Any

from conformance.checks.checkers import Finding, expected_trace
from spec.explain import fmt_batch, fmt_ids
from spec.trace import Workload, snapshot_to_json

MAX_ROWS = 30


def _cell(got: str, want: str) -> str:
    return got if got == want else f"**{got}** (spec {want})"


def markdown_table(w: Workload, observed: dict[str, Any], finding: Finding | None, source: str) -> str:
    c = w.config
    spec = expected_trace(w).steps
    lines = [f"Case `{source}`: num_blocks={c.num_blocks} block_size={c.block_size} max_num_seqs={c.max_num_seqs} "
             f"max_num_batched_tokens={c.max_num_batched_tokens} eos={c.eos}; requests "
             + ", ".join(f"{r.seq_id}(prompt_len={r.prompt_len}, max_tokens={r.max_tokens}"
                         + (f", arrives at step {r.arrival})" if r.arrival > 1 else ")") for r in w.requests), ""]
    if finding is not None:
        lines += [f"**First divergence, step {finding.step} `{finding.call}()` [{finding.check} {finding.rule}]:** "
                  f"{finding.message}", ""]
    lines += ["| step | schedule() | blocks_used | waiting | running | finished |", "|---|---|---|---|---|---|"]
    steps = observed["steps"]
    for i in range(min(max(len(steps), len(spec)), MAX_ROWS)):
        got = steps[i] if i < len(steps) else {}
        want = spec[i] if i < len(spec) else None
        want_snap = snapshot_to_json(want.after_update) if want else {}
        got_snap = got.get("after_update") or {}
        mark = " ◀" if finding is not None and finding.step == i + 1 else ""
        cells = [_cell(fmt_batch(got.get("schedule") or []) if got else "-",
                       fmt_batch(want.batch) if want else "-")]
        for key in ("blocks_used", "waiting", "running"):
            g, s = got_snap.get(key), want_snap.get(key)
            fmt = (lambda v: str(v)) if key == "blocks_used" else (lambda v: fmt_ids(v or []))
            cells.append(_cell(fmt(g), fmt(s)) if key in got_snap else "?")
        cells.append(_cell(fmt_ids(got.get("finished") or []), fmt_ids(list(want.finished) if want else [])))
        lines.append(f"| {i + 1}{mark} | " + " | ".join(cells) + " |")
    if finding is not None and finding.explanation:
        lines += ["", f"What the spec does at step {finding.step}:", ""]
        lines += [f"- {e}" for e in finding.explanation]
    if any(s.get("after_update") is None for s in steps):
        lines += ["", "(`?`: the submission's white-box attributes could not be read; black-box columns only.)"]
    return "\n".join(lines)
