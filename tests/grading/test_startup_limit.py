"""An import's CPU is judged as the import ends, not only where the parent's polls fall.

The parent checks its limits every 0.2 s; an import that went past its CPU limit by less than that and then said
'loaded' was caught only when a poll fell in its last moments: the same file graded 0 in one run and 100 in the
next. At 'loaded' the parent now compares the import's CPU with the limit, counting the smaller of its own
measure and the importing process's own (which leaves out the interpreter's start before it), and the polls stop
an import only IMPORT_SLACK past the limit (a child that understates its CPU gains at most that).
"""

from __future__ import annotations

from pathlib import Path

from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from spec.model import Config
from spec.trace import Request, make_workload

ROOT = Path(__file__).resolve().parents[2]
BURN = "import time as _time\nwhile _time.process_time() < SECONDS:\n    pass\n"  # the importing process's own CPU
WORKLOAD = make_workload(Config(8, 4, 2, 8), [Request("r0", 3, 2)], name="one")


def graded(tmp_path: Path, seconds: float) -> str | None:
    path = tmp_path / f"burn_{seconds}.py"
    path.write_text((ROOT / "impl" / "scheduler.py").read_text() + "\n" + BURN.replace("SECONDS", str(seconds)))
    result = run_in_sandbox(path, [WORKLOAD], Limits(startup_seconds=1.0, workload_seconds=5.0))
    return result.load_error


def test_an_import_just_past_its_cpu_limit_never_loads(tmp_path: Path) -> None:
    for _ in range(4):  # past it by less than a poll's period: before, most runs loaded
        error = graded(tmp_path, 1.02)
        assert error is not None and "ran past its limits" in error, error


def test_an_import_just_within_its_cpu_limit_always_loads(tmp_path: Path) -> None:
    """Its process's own CPU within the limit, the tree's (with the interpreter's start before it) past it: before,
    loaded or not by where the polls fell."""
    for _ in range(4):
        assert graded(tmp_path, 0.96) is None
