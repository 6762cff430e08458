"""A run as one self-contained HTML page: every step as a static table, a stepper on top.

Without JavaScript the page is a plain document, step after step. With it, one
step shows at a time, with a slider, a ribbon of steps (the first divergence in
red), and the keyboard: left/right (or k/j) step, Home/End, d jumps to the first
divergence; the address keeps ``#step=N``. Nothing is fetched at view time.
Everything that comes from a workload or a submission is escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.viewer.strips import MAX_DRAWN, UNDRAWN, Strip, placed, spec_strips
from spec.explain import header
from spec.model import Seq, State
from spec.trace import Step, Trace, Workload, run_workload

ASSETS = Path(__file__).parent
MAX_SHOWN = 200  # characters of any one value from a submission, before it is cut


def esc(value: object) -> str:
    """Escape for HTML text and attributes."""
    return html.escape(str(value), quote=True)


def shown(value: object) -> str:
    """Escape a value that may come from a submission, cut to MAX_SHOWN characters."""
    text = str(value)
    if len(text) > MAX_SHOWN:
        text = text[:MAX_SHOWN] + f"... ({len(text) - MAX_SHOWN} more characters)"
    return html.escape(text, quote=True)


def batch_text(batch: Sequence[Sequence[Any]] | None) -> str:
    if batch is None:
        return "(no value)"
    return "{" + ", ".join(f"{k}: {n}" for k, n in batch) + "}"


def hue(seq_id: str) -> int:
    """A stable colour per sequence (not Python's hash, which changes between runs): the sum of ord(c) * 31**i,
    mod 360, kept mod 360 as it goes, so an id of 2**16 characters takes a millisecond, not minutes."""
    total, power = 0, 1
    for c in seq_id:
        total, power = (total + ord(c) * power) % 360, power * 31 % 360
    return total


def strip_html(strip: Strip | None, label: str, caption: str = "") -> str:
    """The card's strip as coloured cells; long runs of one holder are folded into one cell with a count."""
    head = f'<span class="cap">{esc(caption)}</span>' if caption else ""
    if strip is None:
        return (f'<div class="strip" aria-label="{esc(label)}">{head}<span class="blk bad">more blocks held than '
                'the cache has</span></div>')
    if strip == UNDRAWN:
        return (f'<div class="strip" aria-label="{esc(label)}">{head}<span class="blk free">not drawn: the cache '
                f'has more than {MAX_DRAWN} blocks (the counts are in the table)</span></div>')
    cells = []
    i = 0
    while i < len(strip):
        j = i
        while j < len(strip) and strip[j] == strip[i]:
            j += 1
        who, run = strip[i], j - i
        fold = run > 8
        for _ in range(1 if fold else run):
            times = f"<sub>&times;{run}</sub>" if fold else ""
            count = run if fold else 1
            if who is None:
                cells.append(f'<span class="blk free" data-seq="" data-count="{count}">·{times}</span>')
            else:
                cells.append(f'<span class="blk" data-seq="{esc(who)}" data-count="{count}" '
                             f'style="--h:{hue(who)}">{esc(who)}{times}</span>')
        i = j
    return f'<div class="strip" aria-label="{esc(label)}">{head}{"".join(cells)}</div>'


def _seq_rows(state: State, touched: set[str], theirs: dict[str, Any] | None) -> str:
    rows = []
    for where, queue in (("running", state.running), ("waiting", state.waiting), ("finished", state.finished)):
        for s in queue:
            if where == "finished" and s.seq_id not in touched:
                continue
            rows.append(_seq_row(s, where, theirs))
    return "".join(rows)


def _seq_row(s: Seq, where: str, theirs: dict[str, Any] | None) -> str:
    out = ", ".join(str(t) for t in s.output[-12:])
    more = f"... ({len(s.output) - 12} before) " if len(s.output) > 12 else ""
    cell = ""
    if theirs is not None:
        got = theirs.get(s.seq_id)
        mine = f"{s.num_computed}/{s.num_tokens}/{s.num_blocks}"
        if not isinstance(got, dict):
            cell = '<td class="diff">(not seen)</td>'
        else:
            text = f"{got.get('num_computed')}/{got.get('num_tokens')}/{got.get('num_blocks')}"
            same = text == mine and list(got.get("output") or []) == list(s.output)
            out_note = "" if list(got.get("output") or []) == list(s.output) else f" output {got.get('output')}"
            cell = f'<td class="{"" if same else "diff"}">{shown(text + out_note)}</td>'
    return (f'<tr><th scope="row" style="--h:{hue(s.seq_id)}">{esc(s.seq_id)}</th><td>{where}</td>'
            f"<td>{s.num_computed}</td><td>{s.num_tokens}</td><td>{s.num_blocks}</td>"
            f"<td>[{esc(more + out)}]</td>{cell}</tr>")


def _white_differs(state: State, got: dict[str, Any] | None) -> bool:
    """The submission's white-box state after update() differs from the spec's in a field the page shows."""
    snap = got.get("after_update") if got is not None else None
    if not isinstance(snap, dict) or not isinstance(snap.get("seqs"), dict):
        return False
    if snap.get("blocks_used") != state.blocks_used:
        return True
    for s in state.seqs():
        theirs = snap["seqs"].get(s.seq_id)
        if not isinstance(theirs, dict) or [theirs.get("num_computed"), theirs.get("num_tokens"),
                                            theirs.get("num_blocks"), list(theirs.get("output") or [])] != \
                [s.num_computed, s.num_tokens, s.num_blocks, list(s.output)]:
            return True
    return False


def _observed_step(observed: dict[str, Any] | None, i: int) -> dict[str, Any] | None:
    if observed is None:
        return None
    steps = observed.get("steps") or []
    return steps[i] if i < len(steps) else {}


def _submission_strips(observed: dict[str, Any] | None, num_blocks: int) -> list[Strip | None] | None:
    """Strips of the submission's white-box snapshots after each update(), where it exposes them."""
    if observed is None:
        return None
    pairs = []
    for st in observed.get("steps") or []:
        snap = st.get("after_update")
        if not isinstance(snap, dict):
            return None
        seqs = snap.get("seqs") or {}
        counts = {k: v.get("num_blocks", 0) for k, v in seqs.items() if isinstance(v, dict)}
        if not all(type(v) is int and v >= 0 for v in counts.values()):
            return None
        pairs.append((list(snap.get("running") or []), counts))
    return placed(pairs, num_blocks)


def _section(step: Step, strips: tuple[Strip, Strip], got: dict[str, Any] | None, got_strip: Strip | None,
             diverges: bool, first: bool) -> str:
    want_batch = [list(p) for p in step.batch]
    want_done = list(step.finished)
    cls = "step diverges" if diverges else "step"
    badge = ' <span class="badge">first divergence</span>' if first else (
        ' <span class="badge soft">differs</span>' if diverges else "")
    rows = [f'<tr><th scope="row">spec</th><td class="batch">{esc(batch_text(want_batch))}</td>'
            f'<td class="done">[{esc(", ".join(want_done))}]</td></tr>']
    if got is not None:
        g_batch, g_done = got.get("schedule"), got.get("finished")
        b_cls = "batch" + ("" if g_batch == want_batch else " diff")
        d_cls = "done" + ("" if g_done == want_done else " diff")
        g_done_text = "(no value)" if g_done is None else "[" + ", ".join(str(x) for x in g_done) + "]"
        rows.append(f'<tr class="submission"><th scope="row">submission</th><td class="{b_cls}">'
                    f'{shown(batch_text(g_batch))}</td><td class="{d_cls}">{shown(g_done_text)}</td></tr>')
    s = step.after_update
    touched = set(step.finished)
    snap = got.get("after_update") if got is not None else None
    theirs = snap.get("seqs") if isinstance(snap, dict) and isinstance(snap.get("seqs"), dict) else None
    extra_col = "<th>submission nc/nt/nb</th>" if theirs is not None else ""
    reasons = "".join(f'<li><code>{esc(e.rule)}</code> {esc(e.message)}</li>' for e in step.events)
    added = f'<p class="added">added before schedule(): {esc(", ".join(step.added))}</p>' if step.added else ""
    got_strip_html = ("" if got_strip is None and got is None else
                      f'<h3>KV blocks (submission, placed from its num_blocks)</h3>'
                      f'{strip_html(got_strip, f"submission blocks after step {step.step}", "after update()")}'
                      if got is not None and got.get("after_update") is not None else "")
    return f"""<section class="{cls}" id="step-{step.step}" data-step="{step.step}">
<h2>Step {step.step}{badge}</h2>{added}
<table class="calls"><thead><tr><th></th><th>schedule()</th><th>update() finished</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
<h3>KV blocks (spec)</h3>
{strip_html(strips[0], f"spec blocks after step {step.step} schedule", "after schedule()")}
{strip_html(strips[1], f"spec blocks after step {step.step} update", "after update()")}
{got_strip_html}
<p class="queues">blocks_used <b>{s.blocks_used}</b> of {s.config.num_blocks} &middot;
waiting <span class="q">[{esc(", ".join(q.seq_id for q in s.waiting))}]</span> &middot;
running <span class="q">[{esc(", ".join(q.seq_id for q in s.running))}]</span> &middot;
preemptions {s.num_preemptions}</p>
<table class="seqs"><thead><tr><th>seq</th><th>queue</th><th>num_computed</th><th>num_tokens</th>
<th>num_blocks</th><th>output</th>{extra_col}</tr></thead><tbody>{_seq_rows(s, touched, theirs)}</tbody></table>
<h3>The spec's reasons</h3><ol class="reasons">{reasons}</ol>
</section>"""


def render_page(workload: Workload, observed: dict[str, Any] | None = None, title: str = "",
                finding: dict[str, Any] | None = None) -> str:
    """The whole page for one workload: the spec's run, and the submission's beside it when given."""
    trace: Trace = run_workload(workload)
    strips = spec_strips(trace)
    got_strips = _submission_strips(observed, workload.config.num_blocks)
    sections, ribbon = [], []
    first_bad = None
    for i, step in enumerate(trace.steps):
        got = _observed_step(observed, i)
        diverges = got is not None and (got.get("schedule") != [list(p) for p in step.batch]
                                        or got.get("finished") != list(step.finished)
                                        or _white_differs(step.after_update, got))
        if finding is not None and finding.get("step") == step.step:
            diverges = True
        first = diverges and first_bad is None
        if first:
            first_bad = step.step
        got_strip = got_strips[i] if got_strips is not None and i < len(got_strips) else None
        sections.append(_section(step, (strips[i].after_schedule, strips[i].after_update), got, got_strip,
                                 diverges, first))
        ribbon.append(f'<a href="#step-{step.step}" class="tick{" bad" if diverges else ""}" '
                      f'data-step="{step.step}">{step.step}</a>')
    verdict = ""
    if finding is not None:
        verdict = (f'<p class="verdict fail">FAIL &middot; {esc(finding.get("check", ""))} &middot; '
                   f'step {esc(finding.get("step", "?"))} &middot; <code>{esc(finding.get("rule", ""))}</code>: '
                   f'{shown(finding.get("message", ""))}</p>')
    elif observed is not None:
        verdict = ('<p class="verdict fail">The submission differs from the spec (first at step '
                   f'{first_bad}).</p>' if first_bad else '<p class="verdict pass">The submission agrees with the '
                   'spec at every step shown.</p>')
    data = json.dumps({"steps": len(trace.steps), "first_divergence": first_bad})
    name = title or workload.name or "workload"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>schedcheck &middot; {esc(name)}</title><style>{(ASSETS / "viewer.css").read_text()}</style></head>
<body><header><h1>{esc(name)}</h1>{verdict}
<pre class="config">{esc(chr(10).join(header(workload)))}</pre>
<nav id="stepper" hidden aria-label="steps"><button id="prev" type="button" aria-label="previous step">&larr;</button>
<input id="slider" type="range" min="1" max="{len(trace.steps)}" value="1" aria-label="step">
<button id="next" type="button" aria-label="next step">&rarr;</button> <span id="where"></span>
<span class="keys">keys: &larr; &rarr; (or k j), Home, End, d = first divergence</span></nav>
<div class="ribbon">{"".join(ribbon)}</div></header>
<main>{"".join(sections)}</main>
<script type="application/json" id="run-data">{data}</script>
<script>{(ASSETS / "viewer.js").read_text()}</script></body></html>
"""
