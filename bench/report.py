"""Render a benchmark report as text tables (times, then counts and memory)."""

from __future__ import annotations

from typing import Any


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _table(header: list[str], rows: list[list[object]]) -> str:
    cells = [header] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render(report: dict[str, Any]) -> str:
    """Both tables and the notes that say how the spec was measured."""
    results = report["results"]
    times = []
    for r in results:
        spec = r.get("spec", {})
        times.append([r["workload"], r["timed_steps"], r["scheduled_per_step"],
                      r["floor"]["us_per_step"], r["impl"]["us_per_step"], spec.get("us_per_step"),
                      r["floor"]["ns_per_seq"], r["impl"]["ns_per_seq"], spec.get("ns_per_seq"),
                      r["impl_over_floor"], r["impl_over_floor_best"], r.get("spec_over_impl")])
    counts = []
    for r in results:
        spec = r.get("spec", {})
        window = f"{spec['window'][0]}-{spec['window'][1]}" if spec else "not run"
        counts.append([r["workload"], r["requests"], r["steps"], r["preemptions"], r["steps_with_preemption_pct"],
                       r["memory_steps"], r["floor"]["peak_kib"], r["impl"]["peak_kib"], spec.get("peak_kib"), window])
    out = [
        f"schedcheck bench ({report['mode']}, per-step median of {report['repeats']} runs "
        f"({report['f_repeats']} for F), Python {report['python']}, {report['seconds']} s)",
        "",
        _table(["workload", "steps", "seqs/step", "floor us/step", "impl us/step", "spec us/step",
                "floor ns/seq", "impl ns/seq", "spec ns/seq", "impl/floor", "(fastest)", "spec/impl"], times),
        "",
        _table(["workload", "requests", "steps", "preemptions", "% steps preempting", "traced steps", "floor peak KiB",
                "impl peak KiB", "spec peak KiB", "spec window (steps)"], counts),
        "",
        f"spec: timed on the window of steps shown ({report['spec_repeats']} runs, each step's median), starting",
        "from the state impl reached there; spec/impl compares it with impl's time on the same steps.",
        "F<n>: only the steps in which all n running sequences finish are timed.",
        "floor and impl are timed side by side, one step each in turn, so both see the same machine load;",
        "(fastest): impl/floor from each step's fastest run instead of its median.",
        "peak KiB: tracemalloc peak over the traced steps (floor, impl: the first ones; spec: its window),",
        "setup excluded, in a separate untimed pass.",
    ]
    return "\n".join(out)
