"""The sandbox child's process tree seen from the parent, through /proc: its CPU time, its strays, its end.

Kept apart from conformance.sandbox.isolation (which builds the command) because these work the same
at every level: the tree is found from the child's pid (task/*/children), CPU time is summed over it
(reaped descendants included, through their reaper's cutime/cstime), and a run's last processes are
found by their unique uid, or by the token in their environment when the grader is not root.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

from conformance.sandbox.isolation import Isolation
from conformance.sandbox.proctree import ProcFiles, descendants, stat_fields, walk


def host_pid(root: int, inner: int) -> int | None:
    """The host pid of the descendant of `root` whose pid in its own namespace is `inner` (NSpid's last field)."""
    for pid in descendants(root):
        try:
            with open(f"/proc/{pid}/status") as f:
                line = next((x for x in f if x.startswith("NSpid:")), "")
            if line and int(line.split()[-1]) == inner:
                return pid
        except (OSError, ValueError):
            pass
    return None


def strays(worker: int) -> list[int]:
    """Processes of the tree besides the worker and its supervisor: the worker's children and adopted orphans."""
    try:
        supervisor = int(stat_fields(worker)[1])
    except (OSError, ValueError, IndexError):
        return []
    return [p for p in descendants(supervisor) if p != worker]


def strays_in(walked: list[tuple[int, list[bytes], int]], worker: int) -> list[int]:
    """strays(worker) read off a walk of the child's tree just made (tree_sample), without walking it again:
    what lies below the worker's parent (its stat's ppid) in that walk, the worker aside."""
    fields = next((f for p, f, _ in walked if p == worker), None)
    try:
        below = {int(fields[1])} if fields is not None else set()
    except (ValueError, IndexError):
        return []
    found = []
    for p, _, parent in walked:  # parents come before their children
        if parent in below:
            below.add(p)
            found.append(p)
    return [p for p in found if p != worker]


def of_run(token: str, uid: int | None) -> list[int]:
    """Processes of the run: those of its unique uid, or else those whose environment holds its token."""
    mark = f"SCHEDCHECK_SANDBOX={token}".encode()
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            if uid is not None:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    found.append(int(name))
                continue
            with open(f"/proc/{name}/environ", "rb") as f:
                if mark in f.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            pass
    return found


TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> tuple[float, bool]:
    """CPU seconds of pid and every descendant (live ones, and those reaped inside the tree through their
    reaper's cutime/cstime), and whether any of them is running, waiting for a CPU (R) or for the disk (D)."""
    cpu, running, _ = tree_sample(pid)
    return cpu, running


def tree_sample(pid: int, files: ProcFiles | None = None) -> tuple[float, bool, list[tuple[int, list[bytes], int]]]:
    """tree_cpu, and the walk it was read from (for strays_in); `files` keeps the tree's files open."""
    total, running = 0, False
    walked = walk(pid, files)
    for _, fields, _ in walked:
        try:
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])  # utime stime cutime cstime
        except (ValueError, IndexError):
            continue
        running = running or fields[0] in (b"R", b"D")  # runnable, or waiting for the disk: not idle
    return total / TICK, running, walked


def kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def kill_tree(iso: Isolation, proc: subprocess.Popen[bytes], token: str, uid: int | None) -> int:
    """Kill the child and everything it started; return how many of the run's processes were alive 2 s later."""
    for _ in range(50):  # a fork loop keeps adding children; kill until the tree is empty
        tree = descendants(proc.pid)
        if not tree:
            break
        kill(tree)
    if not iso.pid_namespace:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    kill([proc.pid])
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    deadline = time.monotonic() + 2.0
    while (left := of_run(token, uid)) and time.monotonic() < deadline:  # a namespace's teardown takes a moment
        kill(left)
        time.sleep(0.02)
    return len(left)
