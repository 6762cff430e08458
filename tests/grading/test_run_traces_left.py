"""What a class run leaves on the machine: no folder in /tmp, and no uid used twice for its sandboxes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.sandbox import spawn
from conformance.sandbox.isolation import UID_BASE

ROOT = Path(__file__).resolve().parents[2]


def test_a_grading_process_uses_a_new_uid_for_each_of_its_first_16384_children(monkeypatch):
    """A child never finds, under its uid, a file an earlier child of the run left in a shared /tmp."""
    monkeypatch.setattr(spawn, "_started", [0])
    uids = [spawn.fresh_uid() for _ in range(spawn.UID_CHILDREN)]
    assert len(set(uids)) == spawn.UID_CHILDREN
    assert all(UID_BASE <= u < 2**31 for u in uids)
    monkeypatch.setattr(os, "getpid", lambda: spawn.UID_PROCESSES - 1)  # the largest: still below 2^31
    assert spawn.fresh_uid() < 2**31


@pytest.mark.long
def test_a_class_graded_by_two_workers_leaves_no_folder_in_tmp(tmp_path: Path) -> None:
    """Each pool worker used to make its own run folder and leave it (a worker ends by os._exit, which runs no
    atexit hook); now the parent makes the one folder before the workers fork, and removes it at its exit."""
    subs, tmp = tmp_path / "subs", tmp_path / "tmp"
    tmp.mkdir()
    for name in ("alice", "bob"):
        (subs / name).mkdir(parents=True)
        shutil.copy(ROOT / "impl" / "scheduler.py", subs / name / "p07_scheduler.py")
    env = {**os.environ, "TMPDIR": str(tmp), "SCHEDCHECK_HELD_OUT_SEED": "7"}
    done = subprocess.run([sys.executable, "-m", "conformance", "grade", str(subs), "--out", str(tmp_path / "out"),
                           "--jobs", "2"], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in tmp.iterdir() if p.name.startswith("schedcheck-sandbox-")) == []
