"""The test suite's count and wall time: ``python -m bench --test-time``.

The README quotes how many tests its command runs and how long they take on the development machine. A count
typed by hand is wrong the day a test is added, so this runs the README's two commands (the default suite and
the `long` end-to-end tests, one worker per core), reads pytest's summary line of each, and returns what
bench/measured/tests.json holds; `python -m bench --figures` then writes it into the README.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS: dict[str, tuple[str, ...]] = {  # name in tests.json: the README's command after `python`
    "default": ("-m", "pytest", "-q", "-n", "auto"),
    "long": ("-m", "pytest", "-q", "-n", "auto", "-m", "long"),
}
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ [a-z]+(?:, \d+ [a-z]+)*) in (?P<seconds>[\d.]+)s\b", re.M)


@dataclass(frozen=True)
class Run:
    """One run of a test command: pytest's counts by outcome and its own wall seconds."""

    command: str
    counts: dict[str, int]
    seconds: float

    @property
    def passed(self) -> int:
        return self.counts.get("passed", 0)

    @property
    def bad(self) -> int:
        return sum(self.counts.get(k, 0) for k in ("failed", "error", "errors", "xpassed"))


def summary(command: str, output: str) -> Run:
    """The last summary line of pytest's output ("1449 passed, 2 skipped in 196.23s (0:03:16)") as a Run."""
    found = list(SUMMARY.finditer(output))
    if not found:
        raise ValueError(f"`{command}` printed no pytest summary line; its output ended: {output[-500:]!r}")
    m = found[-1]
    counts = {word: int(n) for n, word in (c.split() for c in m.group("counts").split(", "))}
    return Run(command, counts, float(m.group("seconds")))


def run(name: str) -> Run:
    """Run one of the README's test commands from the repository root and read its summary."""
    argv = [sys.executable, *RUNS[name]]
    command = " ".join(["python", *RUNS[name]])
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    print(f"  {command}: exit {done.returncode} after {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    for line in done.stdout.splitlines():  # which tests failed: the refusal below names only their count
        if line.startswith(("FAILED ", "ERROR ")):
            print(f"    {line}", file=sys.stderr, flush=True)
    return summary(command, done.stdout)


def measure() -> dict[str, object]:
    """Both runs, as bench/measured/tests.json holds them; a run with a failure is refused, not stored."""
    runs = {name: run(name) for name in RUNS}
    bad = [f"`{r.command}`: {r.counts}" for r in runs.values() if r.bad]
    if bad:
        raise RuntimeError("a test failed, so its count and time are not the suite's: " + "; ".join(bad))
    return {"format": "schedcheck/bench-test-time", "version": 1, "cpus": os.cpu_count(),
            **{name: {"command": r.command, "passed": r.passed, "seconds": round(r.seconds, 1), "counts": r.counts}
               for name, r in runs.items()}}


def render(report: dict[str, object]) -> str:
    lines = []
    for name in RUNS:
        r = report[name]
        assert isinstance(r, dict)
        lines.append(f"{r['command']}: {r['passed']:,} passed in {r['seconds']} s ({r['counts']})")
    return "\n".join(lines)
