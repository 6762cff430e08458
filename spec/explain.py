"""Render a trace as a step table in the card's style, with the spec's reasons under each step."""

from __future__ import annotations

from spec.model import DEFAULT_POLICY, Batch, State
from spec.trace import Trace, Workload


def fmt_batch(batch: Batch | list[list[object]]) -> str:
    """{a1: 6, a2: 2}: the card's notation; order is scheduling order."""
    return "{" + ", ".join(f"{i}: {n}" for i, n in batch) + "}"


def fmt_ids(ids: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(ids) + "]"


def fmt_seqs(s: State) -> str:
    """a1 6/7/2 for every waiting or running sequence: num_computed / num_tokens / num_blocks."""
    return "  ".join(f"{q.seq_id} {q.num_computed}/{q.num_tokens}/{q.num_blocks}" for q in s.running + s.waiting)


def header(w: Workload) -> list[str]:
    c = w.config
    lines = [f"config  num_blocks={c.num_blocks} block_size={c.block_size} max_num_seqs={c.max_num_seqs} "
             f"max_num_batched_tokens={c.max_num_batched_tokens} eos={c.eos}" +
             ("" if c.policy == DEFAULT_POLICY else f" policy={c.policy}")]
    eos_at = dict(w.sample.eos_at)
    rules = []
    for seq_id, base in w.sample.base:
        rule = f"{seq_id} -> {base} + len(output)"
        if seq_id in eos_at:
            rule += f" (eos at {list(eos_at[seq_id])})"
        rules.append(rule)
    lines.append("sample  " + ", ".join(rules))
    lines.append("add     " + ", ".join(f"{r.seq_id}(prompt_len={r.prompt_len}, max_tokens={r.max_tokens}"
                                        + (f", step {r.arrival})" if r.arrival > 1 else ")") for r in w.requests))
    return lines


def render_trace(trace: Trace, events: bool = True) -> str:
    """The whole run as a table: per step the batch, fields after update, blocks_used, queues, finished."""
    lines = header(trace.workload)
    cols = f"{'step':>4}  {'schedule()':<24} {'blocks_used':>11}  {'waiting':<14} {'running':<14} finished"
    lines += ["", cols, "-" * len(cols)]
    for s in trace.steps:
        after = s.after_update
        row = (f"{s.step:>4}  {fmt_batch(s.batch):<24} {after.blocks_used:>11}  "
               f"{fmt_ids([q.seq_id for q in after.waiting]):<14} "
               f"{fmt_ids([q.seq_id for q in after.running]):<14} {fmt_ids(list(s.finished))}")
        lines.append(row.rstrip())
        if fmt_seqs(after):
            lines.append(f"{'':>6}after update (num_computed/num_tokens/num_blocks): {fmt_seqs(after)}")
        if events:
            lines += [f"{'':>6}{e.rule:<12} {e.message}" for e in s.events]
    final = trace.final
    lines += ["", "outputs " + ", ".join(f"{k} = {list(v)}" for k, v in sorted(trace.outputs().items())),
              f"num_preemptions {final.num_preemptions}, {len(trace.steps)} steps"]
    return "\n".join(lines)
