"""Check time per profile: ``python -m bench --check-time quick,default [--targets impl,reference,spec]``.

The budgets a correct submission must meet (10 s quick, 30 s default, 5 min
thorough, one core) are acceptance criteria, not unit tests: a timed test would fail
on a loaded machine. Each (target, profile) runs ``schedcheck check`` in a fresh
child process pinned to one CPU, so no cache carries over between runs and the
number is what a student would see; the verdict is recorded beside the time.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BUDGETS = {"quick": 10.0, "default": 30.0, "thorough": 300.0}  # seconds on one core, for a correct submission
TARGETS = {"impl": "impl", "reference": "conformance/mutants/reference_scheduler.py", "spec": "spec"}
ROOT = Path(__file__).resolve().parents[1]


def check_time(target: str, profile: str, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run one check in a child process on one CPU; return its wall time, verdict and load average."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "conformance", "check", TARGETS.get(target, target), "--profile", profile,
               "--quiet", "--json", str(out), *(a for f in exclude for a in ("--exclude-family", f))]
        cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        preexec = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        start, cpu_start = time.perf_counter(), _children_cpu()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, preexec_fn=preexec, check=False)
        seconds, cpu_seconds = time.perf_counter() - start, _children_cpu() - cpu_start
        verdict = json.loads(out.read_text())["verdict"] if out.exists() else f"exit {done.returncode}"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"target": target, "profile": profile, "seconds": round(seconds, 2), "cpu_seconds": round(cpu_seconds, 2),
            "verdict": verdict,
            "budget": BUDGETS.get(profile), "within_budget": seconds <= BUDGETS.get(profile, float("inf")),
            "load_average_1min": None if load is None else round(load, 2), "one_cpu": cpu is not None}


def _children_cpu() -> float:
    """CPU seconds used by finished child processes: unlike wall time, it does not grow when others share the CPU."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_check_times(profiles: list[str], targets: list[str]) -> dict[str, Any]:
    """Every (target, profile) pair, in order; the report says how loaded the machine was."""
    rows = []
    for profile in profiles:
        for target in targets:
            rows.append(check_time(target, profile))
            print(f"  {target} {profile}: {rows[-1]['seconds']} s {rows[-1]['verdict']}", file=sys.stderr, flush=True)
    return {"format": "schedcheck/bench-check-time", "version": 1, "cpus": os.cpu_count(), "rows": rows}


def merged_check_times(old: list[dict[str, Any]], report: dict[str, Any], stamp: dict[str, str]) -> dict[str, Any]:
    """The stored rows with this run's in place of the same (target, profile), new ones at the end, each dated:
    a run of one profile leaves the rows of the others (and the docs' table of them) as they were."""
    new = {(r["target"], r["profile"]): {**r, **stamp} for r in report["rows"]}
    rows = [new.pop((r["target"], r["profile"]), r) for r in old] + list(new.values())
    return {**report, **stamp, "rows": rows}


def render_check_times(report: dict[str, Any]) -> str:
    """A table: target, profile, wall and CPU seconds, budget, verdict, 1-minute load average after the run."""
    lines = ["target     profile   seconds  cpu s  budget  verdict  load", "-" * 58]
    for r in report["rows"]:
        mark = "" if r["within_budget"] else "  OVER BUDGET (wall)"
        lines.append(f"{r['target']:<10} {r['profile']:<9} {r['seconds']:>7.1f} {r['cpu_seconds']:>6.1f} "
                     f"{r['budget'] or 0:>7.0f}  {r['verdict']:<7}  {r['load_average_1min']}{mark}")
    lines.append("A load average above 1 means other work shared the CPU: the times are then upper bounds.")
    return "\n".join(lines)
