"""`schedcheck check` writes nothing into the working directory unless asked to."""

import os
import subprocess
import sys

import pytest


@pytest.mark.long
def test_check_leaves_the_working_directory_as_it_was(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    done = subprocess.run([sys.executable, "-m", "conformance", "check", "impl", "--quiet"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in work.iterdir()) == []
