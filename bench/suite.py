"""Measure every workload on floor, impl and spec in one process and collect the numbers as JSON-ready dicts."""

from __future__ import annotations

import platform
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from bench.runners import Recording, peak_floor, peak_impl, record, run_pair, run_spec, spec_start_state
from bench.workloads import BenchWorkload, f_finish, w1_decode, w2_serving, w3_storm


@dataclass(frozen=True)
class Mode:
    """How long to measure: repeats of the timed passes and the spec's window sizes."""

    name: str
    repeats: int
    w1_steps: int
    w1_spec: int
    w2_spec: int
    w3_spec: int
    f_sizes: tuple[int, ...]
    f_rounds: int  # finishing steps per F run
    f_repeats: int
    f_spec_max: int  # the spec runs F only up to this many sequences (it is quadratic)
    memory_steps: int  # steps traced by tracemalloc for floor and impl (it slows them about 20x)
    spec_repeats: int  # runs of the spec's window (each step's median is kept)


QUICK = Mode("quick", repeats=5, w1_steps=300, w1_spec=3, w2_spec=3, w3_spec=20, f_sizes=(1024, 2048, 4096),
             f_rounds=5, f_repeats=9, f_spec_max=1024, memory_steps=500,
             spec_repeats=3)
FULL = Mode("full", repeats=7, w1_steps=2000, w1_spec=10, w2_spec=10, w3_spec=100, f_sizes=(1024, 2048, 4096),
            f_rounds=10, f_repeats=15, f_spec_max=4096, memory_steps=1_000_000,
            spec_repeats=3)


def workloads(mode: Mode) -> list[BenchWorkload]:
    finishes = [f_finish(n, mode.f_rounds, spec=n <= mode.f_spec_max) for n in mode.f_sizes]
    return [w1_decode(mode.w1_steps, mode.w1_spec), w2_serving(spec_steps=mode.w2_spec),
            w3_storm(spec_steps=mode.w3_spec), *finishes]


def _per_step(total_ns: float, steps: int) -> float:
    return total_ns / steps / 1000 if steps else 0.0


def measure(w: BenchWorkload, mode: Mode) -> dict[str, Any]:
    """Time floor and impl (interleaved, `repeats` times, median), the spec on its window, then peak memory."""
    rec: Recording = record(w)
    timed = slice(w.warmup, rec.steps, w.stride)
    window = slice(w.spec_start, w.spec_start + w.spec_steps)
    steps = len(range(rec.steps)[timed])
    seqs = sum(rec.scheduled[timed])
    runs: dict[str, list[list[int]]] = {"floor": [], "impl": []}
    repeats = mode.f_repeats if w.name.startswith("F") else mode.repeats
    for _ in range(repeats):
        floor_times, impl_times = run_pair(w, rec)
        runs["floor"].append(floor_times)
        runs["impl"].append(impl_times)
    out: dict[str, Any] = {
        "workload": w.name, "title": w.title, "config": w.config(), "requests": len(w.requests),
        "steps": rec.steps, "timed_steps": steps, "scheduled_per_step": round(seqs / steps, 1),
        "preemptions": rec.preemptions,
        "steps_with_preemption_pct": round(100 * rec.steps_with_preemption / rec.steps, 2),
    }
    per_step: dict[str, list[float]] = {}
    for name in ("floor", "impl"):
        # each step's median over the runs, so a step that lost the CPU in one run does not count
        per_step[name] = [statistics.median(col) for col in zip(*runs[name], strict=True)]
        total = sum(per_step[name][timed])
        out[name] = {"us_per_step": round(_per_step(total, steps), 2), "ns_per_seq": round(total / seqs, 1),
                     "runs_us_per_step": [round(_per_step(sum(r[timed]), steps), 2) for r in runs[name]]}
    memory_steps = min(rec.steps, mode.memory_steps)
    out["memory_steps"] = memory_steps
    out["floor"]["peak_kib"] = round(peak_floor(w, rec, memory_steps) / 1024, 1)
    out["impl"]["peak_kib"] = round(peak_impl(w, rec, memory_steps) / 1024, 1)
    out["impl_over_floor"] = round(out["impl"]["us_per_step"] / out["floor"]["us_per_step"], 3)
    # the same ratio from each step's fastest run: what is left when interference is taken out
    best = {name: sum(min(col) for col in list(zip(*runs[name], strict=True))[timed]) for name in runs}
    out["impl_over_floor_best"] = round(best["impl"] / best["floor"], 3)
    if w.spec_steps:
        start = spec_start_state(w, rec)
        spec_runs = [run_spec(w, rec, start)[0] for _ in range(mode.spec_repeats)]
        spec_times = [statistics.median(col) for col in zip(*spec_runs, strict=True)]
        _, spec_peak = run_spec(w, rec, start, memory=True)
        spec_seqs = sum(rec.scheduled[window])
        impl_same = sum(per_step["impl"][window])
        out["spec"] = {"us_per_step": round(_per_step(sum(spec_times), w.spec_steps), 2),
                       "ns_per_seq": round(sum(spec_times) / spec_seqs, 1),
                       "window": [w.spec_start + 1, w.spec_start + w.spec_steps],
                       "impl_us_per_step_same_window": round(_per_step(impl_same, w.spec_steps), 2),
                       "peak_kib": round(spec_peak / 1024, 1)}
        out["spec_over_impl"] = round(sum(spec_times) / impl_same, 1)
    return out


def run_suite(mode: Mode, only: set[str] | None = None, progress: bool = True) -> dict[str, Any]:
    """Measure every workload of `mode` (or those named in `only`) and return the whole report."""
    started = time.monotonic()
    results = []
    for w in workloads(mode):
        if only and w.name not in only and w.name.rstrip("0123456789") not in only:
            continue
        t0 = time.monotonic()
        results.append(measure(w, mode))
        if progress:
            print(f"  {w.name}: measured in {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
    return {"format": "schedcheck/bench", "version": 1, "mode": mode.name, "repeats": mode.repeats,
            "f_repeats": mode.f_repeats, "spec_repeats": mode.spec_repeats,
            "python": platform.python_version(), "machine": platform.machine(),
            "seconds": round(time.monotonic() - started, 1), "results": results}
