"""A calibration class: the reference submission and every catalog mutant as standalone files.

Grading it shows, before a grade is released, that the rubric gives full marks to
a correct scheduler and costs points for every known bug. Each mutant is built as
one self-contained file (conformance/mutants/build.py), because the sandbox runs a
single p07_scheduler.py.
"""

from __future__ import annotations

from pathlib import Path

from conformance.catalog import CATALOG
from conformance.mutants.build import source

IMPL = Path(__file__).resolve().parent.parent.parent / "impl" / "scheduler.py"


def flatten(name: str) -> str:
    """One mutant as a single self-contained module."""
    return source(name)


def write_class(dest: str | Path, correct: Path | None = None) -> list[Path]:
    """Write correct.py (impl, or `correct`) and <bug>.py for every catalog bug into `dest`."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = [dest / "correct.py"]
    written[0].write_text((correct or IMPL).read_text())
    for bug in CATALOG:
        path = dest / f"{bug.name}.py"
        path.write_text(flatten(bug.name))
        written.append(path)
    return written
