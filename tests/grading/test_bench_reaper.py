"""bench/reaper.py counts the CPU of orphans below its command, as the throughput benchmark needs.

A sandbox child's processes are killed with their parents, so their CPU reaches no parent's count;
the reaper adopts them. Here a command leaves a grandchild behind that burns CPU after its parent
is gone: its seconds must appear as adopted, the command's own as the command's, and the exit code
must be passed on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ORPHAN = """
import os, sys, time
if os.fork() == 0:  # the child leaves a grandchild behind and exits at once
    if os.fork() == 0:
        end = time.process_time() + 0.3
        while time.process_time() < end:
            pass
        os._exit(0)
    os._exit(0)
os.wait()
end = time.process_time() + 0.1
while time.process_time() < end:
    pass
sys.exit(3)
"""


def test_the_reaper_counts_the_orphans_cpu_apart_from_the_commands(tmp_path: Path) -> None:
    out = tmp_path / "cpu.json"
    done = subprocess.run([sys.executable, "-m", "bench.reaper", str(out), sys.executable, "-c", ORPHAN], cwd=ROOT,
                          check=False, timeout=60)
    counted = json.loads(out.read_text())
    assert done.returncode == 3 and counted["code"] == 3
    assert counted["adopted"] >= 0.25  # the grandchild's 0.3 s, which no parent waited for
    assert 0.08 <= counted["command"] < 0.25  # the command's own 0.1 s (and its child's, which it reaped)
