"""Measure what the sandbox costs: a sandboxed run against the same driver run in-process.

``python -m conformance.sandbox.bench [submission.py ...]`` builds a fixed corpus of feasible
workloads (seeded), runs each submission's workloads in-process with the child's own driver (the
fastest a grader could go without isolation) and then through run_in_sandbox, and prints both
times and their ratio. The target is a ratio of at most 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from conformance.sandbox.child import drive
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from spec.feasible import liveness_bound, tightest_num_blocks
from spec.model import Config
from spec.trace import Request, Workload, make_workload, workload_to_json

DEFAULT = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"


@dataclass(frozen=True, slots=True)
class Overhead:
    """Seconds for the same workloads in-process and sandboxed."""

    workloads: int
    steps: int  # steps observed in total
    in_process: float
    sandboxed: float

    @property
    def ratio(self) -> float:
        return self.sandboxed / self.in_process


def corpus(count: int = 40, seed: int = 7) -> list[Workload]:
    """Feasible workloads of 6 to 24 requests with arrivals, eos hits and tight caches (seeded)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        block_size = rng.choice((1, 2, 4, 8, 16))
        requests = [Request(f"r{j}", rng.randint(1, 64), rng.randint(1, 24), rng.randint(1, 12))
                    for j in range(rng.randint(6, 24))]
        requests.sort(key=lambda r: r.arrival)
        peak = tightest_num_blocks(block_size, requests)
        config = Config(rng.randint(peak, 3 * peak), block_size, rng.randint(1, 8), rng.randint(4, 96), eos=0)
        eos_at = {r.seq_id: {rng.randrange(r.max_tokens)} for r in requests if rng.random() < 0.3}
        out.append(make_workload(config, requests, eos_at=eos_at, name=f"bench-{i}"))
    return out


def load_in_process(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(path: Path, workloads: list[Workload], limits: Limits | None = None) -> Overhead:
    """Time the in-process driver, then the sandbox, on the same workloads (best of three runs each)."""
    module = load_in_process(path)
    data = [(workload_to_json(w), liveness_bound(w.requests) + 16) for w in workloads]
    best_in = best_out = float("inf")
    steps = 0
    for _ in range(3):
        began = time.perf_counter()
        traces = [drive(module, w, cap) for w, cap in data]
        best_in = min(best_in, time.perf_counter() - began)
        assert all(t["stop"] == "done" for t in traces), "the submission failed in-process; pick a correct one"
        began = time.perf_counter()
        result = run_in_sandbox(path, workloads, limits)
        best_out = min(best_out, time.perf_counter() - began)
        bad = [w.cause for w in result.workloads if w.status != "ok"]
        assert not bad, f"the sandboxed run failed: {bad[:3]}"
        steps = sum(len(w.steps) for w in result.workloads)
    return Overhead(len(workloads), steps, best_in, best_out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.sandbox.bench", description=__doc__)
    parser.add_argument("submissions", nargs="*", type=Path, default=[DEFAULT])
    parser.add_argument("--workloads", type=int, default=40)
    args = parser.parse_args(argv)
    workloads = corpus(args.workloads)
    for path in args.submissions:
        o = measure(path, workloads)
        print(f"{path}: {o.workloads} workloads, {o.steps} steps: in-process {o.in_process:.3f} s, "
              f"sandboxed {o.sandboxed:.3f} s, ratio {o.ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
