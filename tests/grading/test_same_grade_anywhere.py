"""A submission gets the same grade whichever grading process grades it.

A bug written from outside keeps a registry of ids by id(self): what it does depends on where the child's objects
land. Graded by `--jobs 1` it scored 6.25 and by a worker of `--jobs 2` 6.51, because the worker held more files
open and the child's command line, which names its inherited pipes, was longer (docs/sandbox.md, "The same run
every time").
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.unseen.planted import source

IMPL = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"


def scores(out: Path) -> dict[str, str]:
    with (out / "summary.csv").open() as f:
        return {row["submission"]: row["score"] for row in csv.DictReader(f)}


@pytest.mark.long
def test_one_process_a_worker_and_a_process_holding_many_files_grade_alike(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "registry.py").write_text(source("impl_registry_by_id"))
    (subs / "impl.py").write_text(IMPL.read_text())
    env = {**os.environ, "SCHEDCHECK_HELD_OUT_SEED": "1"}

    def grade(out: str, jobs: int, held: int = 0) -> dict[str, str]:
        """`schedcheck grade` in a process of its own holding `held` more files (a fresh one holds few)."""
        code = ("import os, sys\nheld = [os.open(os.devnull, os.O_RDONLY) for _ in range(int(sys.argv[1]))]\n"
                "for fd in held:\n    os.set_inheritable(fd, True)  # kept past the command's own restart\n"
                "from conformance.cli import entry\nsys.argv[1:2] = []\nentry()\n")
        subprocess.run([sys.executable, "-c", code, str(held), "grade", str(subs), "--out", str(tmp_path / out),
                        "--jobs", str(jobs)], env=env, cwd=IMPL.parents[1], capture_output=True, check=True)
        return scores(tmp_path / out)

    first = grade("one", 1)
    assert first["impl"] == "100" and float(first["registry"]) < 100, first
    assert grade("workers", 2) == first == grade("held", 1, held=2**7)
