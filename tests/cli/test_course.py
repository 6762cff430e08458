"""The card's acceptance step, `./check.sh p07`, in a repository made by `schedcheck course-init`."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[2]


def check_sh(repo, *args):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["./check.sh", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.long
def test_check_sh_passes_the_exit_code_through(tmp_path):
    repo = tmp_path / "course"
    assert main(["course-init", str(repo)]) == 0
    (repo / "mine" / "p07_scheduler.py").unlink()  # the starter course-init wrote: now nothing to check
    missing = check_sh(repo, "p07")
    assert missing.returncode == 2 and "mine/p07_scheduler.py not found" in missing.stderr
    shutil.copy(ROOT / "impl" / "scheduler.py", repo / "mine" / "p07_scheduler.py")
    good = check_sh(repo, "p07", "--quiet")
    assert good.returncode == 0, good.stdout[-2000:] + good.stderr[-2000:]
    assert "PASS" in good.stdout
    shutil.copy(ROOT / "examples" / "p07_buggy" / "p07_scheduler.py", repo / "mine" / "p07_scheduler.py")
    bad = check_sh(repo, "p07", "--quiet")
    assert bad.returncode == 1 and "FAIL" in bad.stdout
    assert check_sh(repo, "p08").returncode == 2 and check_sh(repo).returncode == 2


def test_course_init_keeps_an_existing_script_unless_forced(tmp_path, capsys):
    assert main(["course-init", str(tmp_path)]) == 0
    (tmp_path / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    assert main(["course-init", str(tmp_path)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["course-init", str(tmp_path), "--force"]) == 0
    assert "schedcheck check" in (tmp_path / "check.sh").read_text()
