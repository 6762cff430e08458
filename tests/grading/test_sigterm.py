"""`schedcheck grade` killed by SIGTERM, as an instructor stops a run that takes too long, leaves nothing behind:
no sandboxed child, no run folder, no class folder under /tmp (the default action skipped every exit hook, and
each killed run left its empty schedcheck-sandbox-* folder: a round-4 attack's side note)."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SLOW = "\nimport time as _time\n_plain = Scheduler.schedule\nScheduler.schedule = lambda self: (_time.sleep(0.01), " \
       "_plain(self))[1]\n"


@pytest.mark.long
def test_a_killed_class_run_removes_its_folders_and_children(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("slow_a", "slow_b"):
        (subs / f"{name}.py").write_text((ROOT / "impl" / "scheduler.py").read_text() + SLOW)
    before = set(glob.glob("/tmp/schedcheck-sandbox-*"))
    env = {**os.environ, "SCHEDCHECK_HELD_OUT_SEED": "7"}
    grade = subprocess.Popen([sys.executable, "-m", "conformance", "grade", str(subs), "--out", str(tmp_path / "out"),
                              "--jobs", "2"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not set(glob.glob("/tmp/schedcheck-sandbox-*")) - before and time.monotonic() < deadline:
        time.sleep(0.2)
    ours = set(glob.glob("/tmp/schedcheck-sandbox-*")) - before
    assert ours, "the class run made no folder to look at"
    time.sleep(2)  # runs under way in both workers
    grade.send_signal(signal.SIGTERM)
    _, err = grade.communicate(timeout=120)
    assert grade.returncode != 0, err.decode()[-2000:]
    assert not [p for p in ours if os.path.exists(p)], f"left behind: {ours}"
    time.sleep(1)
    alive = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(subs).encode() in (proc / "cmdline").read_bytes():
                alive.append(proc.name)
        except OSError:
            continue
    assert not alive, f"processes of the killed run still alive: {alive}"
