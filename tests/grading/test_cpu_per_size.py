"""A run's CPU limit grows with its requests (Limits.cpu_for): a flat limit cut correct schedulers on large runs.

A correct scheduler written for clarity (the card's reference, immutable state copied every step) took 1.2 to 1.5 s of
CPU on a two-step workload of 2,048 requests, against the tight rubric's 1 s for every run: it timed out in some
grades and not in others (99.89, 99.97 and 100 for one file, a regrade's note naming another run). A run now may take
workload_cpu_seconds once more for every 512 requests it holds, a group's schedulers' together; a run of a few
requests keeps the flat limit, so a hang there is caught as soon as before.
"""

from __future__ import annotations

from pathlib import Path

from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import CPU_REQUESTS, Limits
from spec.model import Config
from spec.trace import Request, make_workload, workload_to_json

ROOT = Path(__file__).resolve().parents[2]
BURN = "import time as _time\n_end = _time.process_time() + 1.5\nwhile _time.process_time() < _end:\n    pass\n"


def workload(n: int, first: str = "r0"):
    reqs = [Request(first, 1, 1)] + [Request(f"r{i}", 1, 1) for i in range(1, n)]
    return make_workload(Config(n, 1, n, n), reqs, name=f"w{n}")


def test_the_limit_is_the_flat_one_for_a_few_requests_and_grows_by_one_for_every_512():
    limits = Limits(workload_cpu_seconds=2)
    sizes = (1, 511, 512, 1023, 1024, 2048)
    assert [limits.cpu_for(workload_to_json(workload(n))) for n in sizes] == [2, 2, 4, 4, 6, 10]
    group = {**workload_to_json(workload(300)), "group": [workload_to_json(workload(300))]}
    assert CPU_REQUESTS == 512 and limits.cpu_for(group) == 4  # the schedulers of a group together


def test_a_large_run_may_spend_what_a_small_one_may_not(tmp_path):
    """The same 1.5 s of CPU in one add(): past the 1 s limit of a run of one request, within that of 2,048."""
    path = tmp_path / "burns.py"
    path.write_text((ROOT / "impl" / "scheduler.py").read_text().replace(
        "        self._seq_ids.add(seq_id)\n",
        "        self._seq_ids.add(seq_id)\n"
        "        if seq_id == 'slow':\n" + "".join(f"            {line}\n" for line in BURN.splitlines()), 1))
    small, large = workload(1, "slow"), workload(2048, "slow")
    result = run_in_sandbox(path, [small, large], Limits(workload_seconds=5.0, workload_cpu_seconds=1))
    assert [w.status for w in result.workloads] == ["cpu_limit", "ok"], result.causes()
    assert "used more than 1 s of CPU time" in result.workloads[0].cause
