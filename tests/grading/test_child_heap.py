"""The sandbox child's collector walks only what the runs make, not the job it was sent.

The child holds every run of its job (a grade's thousands, some of 4,097 requests) as decoded JSON to the end; each
full collection walked all of it again. In-process, with the grade's public runs held alive, the plain runs of a
correct scheduler took 4.1 s of CPU with the default collector and 2.2 s with those runs frozen (gc.freeze); the
child now freezes its job once it is read. What a submission can tell from it is only when unreachable cycles are
freed, which no docs/api.md operation depends on.
"""

from __future__ import annotations

from pathlib import Path

from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from spec.model import Config
from spec.trace import Request, make_workload

ROOT = Path(__file__).resolve().parents[2]
LOOKS = (  # a scheduler that refuses to start while the collector can see the job's entries
    "        import gc as _gc\n"
    "        if any(type(o) is dict and 'step_cap' in o for o in _gc.get_objects()):\n"
    "            raise RuntimeError('the job is in the collector\\'s sight')\n")


def test_the_job_a_child_holds_is_out_of_the_collectors_sight(tmp_path):
    path = tmp_path / "looks.py"
    source = (ROOT / "impl" / "scheduler.py").read_text()
    anchor = "                 sample_fn: Callable[[Sequence], int], eos: int | None = None) -> None:\n"
    assert anchor in source
    path.write_text(source.replace(anchor, anchor + LOOKS, 1))
    runs = [make_workload(Config(8, 4, 2, 8), [Request(f"r{k}", 3, 2)], name=f"w{k}") for k in range(3)]
    result = run_in_sandbox(path, runs, Limits(workload_seconds=5.0))
    assert [w.status for w in result.workloads] == ["ok"] * 3, result.causes()
