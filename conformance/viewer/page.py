"""A run as one self-contained HTML page: every step as a static table, a stepper on top.

Without JavaScript the page is a plain document, step after step. With it, one
step shows at a time, with a slider, a ribbon of steps (the first divergence in
red), and the keyboard: left/right (or k/j) step, Home/End, d jumps to the first
divergence; the address keeps ``#step=N``. Nothing is fetched at view time.
Everything that comes from a workload or a submission is escaped.

The page stays small whatever the run (a class dashboard links one per entry): a run of more
than PAGE_STEPS steps shows its first steps and those around the divergence, as the step
table does (conformance/reports/traces.py ``shown_steps``); a step lists at most PAGE_SEQS
sequences, those the step touched first; and an id longer than ID_SHOWN characters is shown
by its ends and a digest of the whole (``Names``), the full id once, cut, in the legend.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from conformance.observed import Observed, SeqState, Snapshot, StepRecord
from conformance.reports.traces import left_out, shown_steps
from conformance.viewer.strips import MAX_DRAWN, UNDRAWN, Strip, placed, spec_strips
from spec.explain import header
from spec.model import Seq, State
from spec.trace import Step, Trace, Workload, run_workload

ASSETS = Path(__file__).parent
MAX_SHOWN = 200  # characters of any one value from a submission, before it is cut
PAGE_STEPS = 2**6  # steps a page shows in full; a longer run shows its first ones and those around the divergence
PAGE_SEQS = 2**6  # sequences a step's table lists (a crowd's 2**11 rows per step made pages of megabytes)
ID_SHOWN = 2**5  # characters of an id shown as they are; a longer one is cut to its ends and a digest
PAGE_CELLS = 2**8  # cells a strip draws (runs of one holder folded); past it the strip says so, the table counts


class Names:
    """How a page names each sequence: an id longer than ID_SHOWN by its first and last characters and a digest of
    the whole, so distinct ids stay distinct and an id of 2**16 characters costs a few bytes per mention."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.long = {i: f"{i[:12]}…{i[-8:]}#{hashlib.sha256(i.encode('utf-8', 'replace')).hexdigest()[:6]}"
                     for i in ids if len(i) > ID_SHOWN}
        self.longest_first = sorted(self.long, key=len, reverse=True)  # where one id holds another

    def __call__(self, text: str) -> str:
        """`text` (an id, or a text that names ids) with every long id in it replaced by its short name. Lists of
        ids are named id by id (ids()), so a whole text is searched only for the spec's reasons and a message."""
        short = self.long.get(text)
        if short is not None or not self.long:
            return text if short is None else short
        for i in self.longest_first:
            if i in text:
                text = text.replace(i, self.long[i])
        return text

    def ids(self, ids: Iterable[str]) -> str:
        """A list of ids as the page writes it, each by its name: "[a1, a2]"."""
        return "[" + ", ".join(self.long.get(i, i) for i in ids) + "]"

    def batch(self, batch: Sequence[Sequence[Any]] | None) -> str:
        """A batch as the page writes it, each id by its name: "{a1: 2, a2: 1}"."""
        return batch_text(None if batch is None else [(self.long.get(str(k), k), n) for k, n in batch])

    def legend(self) -> str:
        if not self.long:
            return ""
        rows = "".join(f"<li><code>{esc(short)}</code>: {shown(i)} ({len(i)} characters)</li>"
                       for i, short in self.long.items())
        return f'<details class="legend"><summary>long ids, as this page names them</summary><ul>{rows}</ul></details>'


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


def strip_html(strip: Strip | None, label: str, caption: str, names: Names) -> str:
    """The card's strip as coloured cells; long runs of one holder are folded into one cell with a count."""
    head = f'<span class="cap">{esc(caption)}</span>' if caption else ""
    if strip is None:
        return (f'<div class="strip" aria-label="{esc(label)}">{head}<span class="blk bad">more blocks held than '
                'the cache has</span></div>')
    if strip == UNDRAWN:
        return (f'<div class="strip" aria-label="{esc(label)}">{head}<span class="blk free">not drawn: the cache '
                f'has more than {MAX_DRAWN} blocks (the counts are in the table)</span></div>')
    cells: list[str] = []
    i = 0
    while i < len(strip):
        if len(cells) == PAGE_CELLS:
            return (f'<div class="strip" aria-label="{esc(label)}">{head}<span class="blk free">not drawn: more '
                    f'than {PAGE_CELLS} runs of blocks (the counts are in the table)</span></div>')
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
                name = esc(names(who))
                cells.append(f'<span class="blk" data-seq="{name}" data-count="{count}" '
                             f'style="--h:{hue(who)}">{name}{times}</span>')
        i = j
    return f'<div class="strip" aria-label="{esc(label)}">{head}{"".join(cells)}</div>'


def _seq_rows(state: State, touched: set[str], theirs: dict[str, SeqState] | None, names: Names) -> str:
    """A row per live sequence and per one finished now; past PAGE_SEQS, those the step touched (scheduled,
    finished, or different in the submission's state) come first and the rest are counted."""
    listed = [(where, s) for where, queue in (("running", state.running), ("waiting", state.waiting),
                                             ("finished", state.finished))
              for s in queue if where != "finished" or s.seq_id in touched]
    if len(listed) > PAGE_SEQS:
        def differs(s: Seq) -> bool:
            got = theirs.get(s.seq_id) if theirs is not None else None
            return theirs is not None and (got is None or got.num_computed != s.num_computed)
        first = [x for x in listed if x[1].seq_id in touched or differs(x[1])][:PAGE_SEQS]
        kept = {id(s) for _, s in first}
        first += [x for x in listed if id(x[1]) not in kept][:PAGE_SEQS - len(first)]
        more = len(listed) - len(first)
        listed = first
    else:
        more = 0
    rows = [_seq_row(s, where, theirs, names) for where, s in listed]
    if more:
        rows.append(f'<tr><td colspan="7">... and {more} more sequences, as the queues above list them</td></tr>')
    return "".join(rows)


def _seq_row(s: Seq, where: str, theirs: dict[str, SeqState] | None, names: Names) -> str:
    out = ", ".join(str(t) for t in s.output[-12:])
    more = f"... ({len(s.output) - 12} before) " if len(s.output) > 12 else ""
    cell = ""
    if theirs is not None:
        got = theirs.get(s.seq_id)
        if got is None:
            cell = '<td class="diff">(not seen)</td>'
        else:  # a value the submission does not give shows as "-", and differs from nothing
            counts = (got.num_computed, got.num_tokens, got.num_blocks)
            text = "/".join("-" if n is None else str(n) for n in counts)
            same = _agree(counts, (s.num_computed, s.num_tokens, s.num_blocks)) and got.output == s.output
            out_note = "" if got.output == s.output else f" output {list(got.output)}"
            cell = f'<td class="{"" if same else "diff"}">{shown(text + out_note)}</td>'
    return (f'<tr><th scope="row" style="--h:{hue(s.seq_id)}">{esc(names(s.seq_id))}</th><td>{where}</td>'
            f"<td>{s.num_computed}</td><td>{s.num_tokens}</td><td>{s.num_blocks}</td>"
            f"<td>[{esc(more + out)}]</td>{cell}</tr>")


def _white_differs(state: State, got: StepRecord | None) -> bool:
    """The submission's white-box state after update() differs from the spec's in a field the page shows."""
    snap = _snapshot(got)
    if snap is None:
        return False
    if not _agree((snap.blocks_used,), (state.blocks_used,)):
        return True
    for s in state.seqs():
        theirs = snap.seqs.get(s.seq_id)
        if theirs is None or theirs.output != s.output or not _agree(
                (theirs.num_computed, theirs.num_tokens, theirs.num_blocks),
                (s.num_computed, s.num_tokens, s.num_blocks)):
            return True
    return False


def _agree(theirs: tuple[int | None, ...], spec: tuple[int, ...]) -> bool:
    """Whether the submission's values equal the spec's, where it gives them (None: not given)."""
    return all(t is None or t == v for t, v in zip(theirs, spec, strict=True))


def _snapshot(got: StepRecord | None) -> Snapshot | None:
    """The submission's state after update() at a step, where it was recorded and read."""
    return got.after_update if got is not None and isinstance(got.after_update, Snapshot) else None


def _observed_step(observed: Observed | None, i: int) -> StepRecord | None:
    """The submission's step i (0-based); one with nothing recorded past the end of its run."""
    if observed is None:
        return None
    return observed.steps[i] if i < len(observed.steps) else StepRecord(i + 1, ())


def _submission_strips(observed: Observed | None, num_blocks: int, keep: set[int], last: int
                        ) -> list[Strip | None] | None:
    """Strips of the submission's white-box snapshots after each update(), where it exposes them, drawn for the
    steps in `keep` only, and placed up to step `last` (the spec's last: no later step is shown)."""
    if observed is None:
        return None
    pairs = []
    for st in observed.steps[:last]:
        snap = _snapshot(st)
        if snap is None:
            return None
        counts = {k: v.num_blocks for k, v in snap.seqs.items() if v.num_blocks is not None}
        if len(counts) < len(snap.seqs) or not all(v >= 0 for v in counts.values()):
            return None  # a count it does not give, or cannot be drawn
        pairs.append((list(snap.running), counts))
    return placed(pairs, num_blocks, keep)


def _batch(got: StepRecord) -> list[list[Any]] | None:
    """schedule()'s batch as [seq_id, n] pairs (None: not recorded, or not a dict)."""
    return None if not isinstance(got.schedule, tuple) else [list(p) for p in got.schedule]


def _done(got: StepRecord) -> list[str] | None:
    return None if not isinstance(got.finished, tuple) else list(got.finished)


def _section(step: Step, strips: tuple[Strip, Strip], got: StepRecord | None, got_strip: Strip | None,
             diverges: bool, first: bool, names: Names) -> str:
    want_batch = [list(p) for p in step.batch]
    want_done = list(step.finished)
    cls = "step diverges" if diverges else "step"
    badge = ' <span class="badge">first divergence</span>' if first else (
        ' <span class="badge soft">differs</span>' if diverges else "")
    rows = [f'<tr><th scope="row">spec</th><td class="batch">{shown(names.batch(want_batch))}</td>'
            f'<td class="done">{shown(names.ids(want_done))}</td></tr>']
    if got is not None:
        g_batch, g_done = _batch(got), _done(got)
        b_cls = "batch" + ("" if g_batch == want_batch else " diff")
        d_cls = "done" + ("" if g_done == want_done else " diff")
        g_done_text = "(no value)" if g_done is None else names.ids(str(x) for x in g_done)
        rows.append(f'<tr class="submission"><th scope="row">submission</th><td class="{b_cls}">'
                    f'{shown(names.batch(g_batch))}</td><td class="{d_cls}">{shown(g_done_text)}</td>'
                    '</tr>')
    s = step.after_update
    touched = set(step.finished) | {seq_id for seq_id, _ in step.batch}
    snap = _snapshot(got)
    theirs = snap.seqs if snap is not None else None
    extra_col = "<th>submission nc/nt/nb</th>" if theirs is not None else ""
    reasons = "".join(f'<li><code>{esc(e.rule)}</code> {shown(names(e.message))}</li>'
                      for e in step.events[:PAGE_SEQS])
    if len(step.events) > PAGE_SEQS:
        reasons += f"<li>... and {len(step.events) - PAGE_SEQS} more</li>"
    added = f'<p class="added">added before schedule(): {shown(names.ids(step.added)[1:-1])}</p>' if step.added else ""
    got_strip_html = ("" if got_strip is None and got is None else
                      f'<h3>KV blocks (submission, placed from its num_blocks)</h3>'
                      f'{strip_html(got_strip, f"submission blocks after step {step.step}", "after update()", names)}'
                      if snap is not None else "")
    return f"""<section class="{cls}" id="step-{step.step}" data-step="{step.step}">
<h2>Step {step.step}{badge}</h2>{added}
<table class="calls"><thead><tr><th></th><th>schedule()</th><th>update() finished</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
<h3>KV blocks (spec)</h3>
{strip_html(strips[0], f"spec blocks after step {step.step} schedule", "after schedule()", names)}
{strip_html(strips[1], f"spec blocks after step {step.step} update", "after update()", names)}
{got_strip_html}
<p class="queues">blocks_used <b>{s.blocks_used}</b> of {s.config.num_blocks} &middot;
waiting <span class="q">{shown(names.ids(q.seq_id for q in s.waiting))}</span> &middot;
running <span class="q">{shown(names.ids(q.seq_id for q in s.running))}</span> &middot;
preemptions {s.num_preemptions}</p>
<table class="seqs"><thead><tr><th>seq</th><th>queue</th><th>num_computed</th><th>num_tokens</th>
<th>num_blocks</th><th>output</th>{extra_col}</tr></thead><tbody>{_seq_rows(s, touched, theirs, names)}</tbody>
</table>
<h3>The spec's reasons</h3><ol class="reasons">{reasons}</ol>
</section>"""


def _diverges(step: Step, got: StepRecord | None, finding: dict[str, Any] | None) -> bool:
    """Whether the submission's step differs from the spec's (or the finding is at it)."""
    if finding is not None and finding.get("step") == step.step:
        return True
    return got is not None and (_batch(got) != [list(p) for p in step.batch] or _done(got) != list(step.finished)
                                or _white_differs(step.after_update, got))


def render_page(workload: Workload, observed: Observed | None = None, title: str = "",
                finding: dict[str, Any] | None = None) -> str:
    """The whole page for one workload: the spec's run, and the submission's beside it when given."""
    trace: Trace = run_workload(workload)
    names = Names([r.seq_id for r in workload.requests])
    diverging = [_diverges(step, _observed_step(observed, i), finding) for i, step in enumerate(trace.steps)]
    first_bad = next((step.step for step, bad in zip(trace.steps, diverging, strict=True) if bad), None)
    total = len(trace.steps)
    window: list[int | None] = list(range(1, total + 1)) if total <= PAGE_STEPS else shown_steps(total, first_bad)
    keep = {k for k in window if k is not None}
    strips = spec_strips(trace, keep)
    got_strips = _submission_strips(observed, workload.config.num_blocks, keep, total)
    sections, ribbon = [], []
    for j, k in enumerate(window):
        if k is None:
            a, b = left_out(window, j, total)
            sections.append(f'<p class="left-out">steps {a} to {b} left out ({b - a + 1} steps): the page shows a '
                            f'run of more than {PAGE_STEPS} steps by its first steps and those around the first '
                            'divergence</p>')
            continue
        i, step = k - 1, trace.steps[k - 1]
        got_strip = got_strips[i] if got_strips is not None and i < len(got_strips) else None
        sections.append(_section(step, (strips[i].after_schedule, strips[i].after_update), _observed_step(observed, i),
                                 got_strip, diverging[i], step.step == first_bad, names))
        ribbon.append(f'<a href="#step-{step.step}" class="tick{" bad" if diverging[i] else ""}" '
                      f'data-step="{step.step}">{step.step}</a>')
    verdict = ""
    if finding is not None:
        verdict = (f'<p class="verdict fail">FAIL &middot; {esc(finding.get("check", ""))} &middot; '
                   f'step {esc(finding.get("step", "?"))} &middot; <code>{esc(finding.get("rule", ""))}</code>: '
                   f'{shown(names(str(finding.get("message", ""))))}</p>')
    elif observed is not None:
        verdict = ('<p class="verdict fail">The submission differs from the spec (first at step '
                   f'{first_bad}).</p>' if first_bad else '<p class="verdict pass">The submission agrees with the '
                   'spec at every step shown.</p>')
    data = json.dumps({"steps": total, "first_divergence": first_bad})
    windowed = (f'<p class="left-out-note">The run has {total} steps; this page shows {len(ribbon)} of them, the first '
                "ones and those around the first divergence.</p>" if len(ribbon) < total else "")
    name = title or workload.name or "workload"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>schedcheck &middot; {shown(name)}</title><style>{(ASSETS / "viewer.css").read_text()}</style></head>
<body><header><h1>{shown(name)}</h1>{verdict}
<pre class="config">{esc(names(chr(10).join(header(workload))))}</pre>{names.legend()}{windowed}
<nav id="stepper" hidden aria-label="steps"><button id="prev" type="button" aria-label="previous step">&larr;</button>
<input id="slider" type="range" min="1" max="{len(ribbon)}" value="1" aria-label="step">
<button id="next" type="button" aria-label="next step">&rarr;</button> <span id="where"></span>
<span class="keys">keys: &larr; &rarr; (or k j), Home, End, d = first divergence</span></nav>
<div class="ribbon">{"".join(ribbon)}</div></header>
<main>{"".join(sections)}</main>
<script type="application/json" id="run-data">{data}</script>
<script>{(ASSETS / "viewer.js").read_text()}</script></body></html>
"""
