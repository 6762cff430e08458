"""A calibration class: the reference submission and every catalog mutant as standalone files.

Grading it shows, before a grade is released, that the rubric gives full marks to
a correct scheduler and costs points for every known bug. A mutant is shipped as a
subclass of conformance/mutants/reference_scheduler.py; here it is flattened into
one file, because the sandbox runs a single p07_scheduler.py.
"""

from __future__ import annotations

from pathlib import Path

from conformance.catalog import CATALOG

MUTANTS = Path(__file__).resolve().parent.parent / "mutants"
IMPL = Path(__file__).resolve().parent.parent.parent / "impl" / "scheduler.py"
IMPORTS = ("from reference_scheduler import Scheduler as Reference\n",
           "from reference_scheduler import Sequence, SequenceStatus\n")


def flatten(name: str) -> str:
    """One mutant and the reference it derives from, as a single module."""
    body = (MUTANTS / f"{name}.py").read_text()
    for line in IMPORTS:
        body = body.replace(line, "")
    body = body.replace("from __future__ import annotations\n", "")
    reference = (MUTANTS / "reference_scheduler.py").read_text()
    return f"{reference}\nReference = Scheduler\n\n# --- mutant {name} ---\n{body}"


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
