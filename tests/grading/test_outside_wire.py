"""A wire program in a third language, written from the docs alone, passes `check` and gets 100 from `grade`.

tests/grading/outside_wire/README.md says who wrote it and from what. It is built with cargo, offline (it
uses the standard library only), into the test's own folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUST = Path(__file__).parent / "outside_wire" / "rust"
CARGO = shutil.which("cargo") or next((str(p) for p in (Path.home() / ".cargo" / "bin" / "cargo",) if p.is_file()),
                                      None)
pytestmark = [pytest.mark.long, pytest.mark.skipif(CARGO is None, reason="cargo is not installed: the Rust program "
                                                                         "cannot be built here")]


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("rust-target")
    assert CARGO is not None
    built = subprocess.run([CARGO, "build", "--release", "--offline", "--quiet", "--manifest-path",
                            str(RUST / "Cargo.toml"), "--target-dir", str(target)], capture_output=True, text=True,
                           check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    return target / "release" / "rusty-sched"


def test_the_rust_program_passes_check(program: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "conformance", "check", "--wire", str(program)], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "PASS" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_rust_program_gets_full_marks(program: Path, tmp_path: Path) -> None:
    entry = tmp_path / "class" / "rusty"
    entry.mkdir(parents=True)
    shutil.copy(program, entry / "rusty-sched")
    (entry / "wire.toml").write_text('command = ["./rusty-sched"]\n')
    env = {**os.environ, "SCHEDCHECK_HELD_OUT_SEED": "99"}
    done = subprocess.run([sys.executable, "-m", "conformance", "grade", str(tmp_path / "class"), "--out",
                           str(tmp_path / "out"), "--jobs", "1"], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    grade = json.loads((tmp_path / "out" / "rusty" / "grade.json").read_text())
    assert grade["score"] == 100, (tmp_path / "out" / "rusty" / "report.md").read_text()[:3000]
