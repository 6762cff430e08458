"""Isolation levels for the sandbox child: detect what the machine allows, build the command, kill the tree.

Three levels, best first (docs/sandbox.md says what each guarantees):
- ``pid-namespace``: the grader is root; the child gets new PID, mount and network namespaces and
  runs as an unused uid (so RLIMIT_NPROC applies) keeping only CAP_DAC_READ_SEARCH (to read the
  interpreter); the project directory is hidden under an empty tmpfs.
- ``user-namespace``: the grader is not root but may create user namespaces; same namespaces, the
  child's real uid is the grader's own (RLIMIT_NPROC applies since it is not root).
- ``process-group``: no namespaces; a new session, a subreaper supervisor and a sweep of every
  process carrying the run's token. A process that clears its environment and escapes the
  supervisor's tree can survive; the result counts survivors found.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

LEVELS = ("pid-namespace", "user-namespace", "process-group")
NS_FLAGS = ["--pid", "--fork", "--mount-proc", "--net", "--kill-child"]
HIDE = ('n=$1; shift; while [ "$n" -gt 0 ]; do mount -t tmpfs -o size=4k,mode=0555 schedcheck-hidden "$1" '
        '2>/dev/null; shift; n=$((n-1)); done; exec "$@"')
UID_BASE = 0x30000  # unused uids for the child at the pid-namespace level; one per run keeps NPROC counts apart


@dataclass(frozen=True, slots=True)
class Isolation:
    """The isolation level in force and what it gives."""

    level: str  # one of LEVELS
    pid_namespace: bool  # every descendant dies with the child; /proc shows only the sandbox
    non_root: bool  # the child's real uid is not root, so RLIMIT_NPROC caps forks
    network: bool  # the child can reach the network
    hides_project: bool  # the project tree is covered by an empty tmpfs in the child's view

    def describe(self) -> str:
        parts = ["PID namespace" if self.pid_namespace else "process group + sweep",
                 "non-root uid" if self.non_root else "root uid (RLIMIT_NPROC not enforced)",
                 "no network" if not self.network else "network open",
                 "project hidden" if self.hides_project else "project readable"]
        return f"{self.level}: " + ", ".join(parts)


_detected: dict[str, bool] = {}


def prefix(level: str, uid: int, hide: list[str]) -> list[str]:
    """The argv that wraps the interpreter's argv at this level."""
    mount = ["sh", "-c", HIDE, "sh", str(len(hide)), *hide]
    if level == "pid-namespace":
        drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all,+dac_read_search",
                "--ambient-caps=+dac_read_search", "--bounding-set=-all,+dac_read_search", "--no-new-privs", "--"]
        return ["unshare", *NS_FLAGS, "--", *mount, *drop]
    if level == "user-namespace":
        return ["unshare", "--user", "--map-root-user", *NS_FLAGS, "--", *mount]
    return []


def works(level: str, python: str) -> bool:
    """Whether this machine can start an interpreter at this level (probed once per process)."""
    if level not in _detected:
        ok = level == "process-group"
        needs = ["unshare", "sh", "mount"] + (["setpriv"] if level == "pid-namespace" else [])
        if not ok and (level == "user-namespace" or os.geteuid() == 0) and all(shutil.which(t) for t in needs):
            argv = prefix(level, UID_BASE, []) + [python, "-S", "-c", "import os; print(os.getpid())"]
            try:
                done = subprocess.run(argv, capture_output=True, timeout=10, env={"PATH": "/usr/bin:/bin"}, cwd="/")
                ok = done.returncode == 0 and done.stdout.strip() == b"1"
            except (OSError, subprocess.TimeoutExpired):
                ok = False
        _detected[level] = ok
    return _detected[level]


def detect(python: str, force: str | None = None) -> Isolation:
    """The best level this machine allows, or the forced one (ValueError if it does not work here).

    A root grader prefers pid-namespace (a dropped uid); any other grader prefers user-namespace.
    """
    if force is not None and force not in LEVELS:
        raise ValueError(f"isolation must be one of {', '.join(LEVELS)}, got {force!r}")
    root = os.geteuid() == 0
    order = LEVELS if root else ("user-namespace", "process-group")
    for level in (force,) if force else order:
        if works(level, python):
            ns = level != "process-group"
            return Isolation(level, ns, level == "pid-namespace" or not root, not ns, ns)
    raise ValueError(f"isolation level {force!r} does not work on this machine; leave it unset to use the best one")


def children(pid: int) -> list[int]:
    """Direct children of pid, from /proc (every thread's list)."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
    except OSError:
        pass
    return found


def descendants(pid: int) -> list[int]:
    seen, todo = [], [pid]
    while todo:
        kids = children(todo.pop())
        seen += kids
        todo += kids
    return seen


def carrying(token: str) -> list[int]:
    """Processes whose initial environment holds this run's token (found by scanning /proc)."""
    mark = f"SCHEDCHECK_SANDBOX={token}".encode()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/environ", "rb") as f:
                    if mark in f.read().split(b"\0"):
                        found.append(int(name))
            except OSError:
                pass
    return found


def kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def kill_tree(iso: Isolation, proc: subprocess.Popen[bytes], token: str) -> int:
    """Kill the child and everything it started: namespace teardown, else the tree, the group and a sweep.

    Return how many processes of the run were still alive 2 s later (0 unless isolation failed).
    """
    if iso.pid_namespace:
        kill(children(proc.pid))  # the namespace's init: its death kills every process inside
    else:
        for _ in range(50):  # a fork loop keeps adding children; kill until the tree is empty
            tree = descendants(proc.pid)
            if not tree:
                break
            kill(tree)
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    kill([proc.pid])
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    deadline = time.monotonic() + 2.0
    while (left := carrying(token)) and time.monotonic() < deadline:  # a namespace's teardown takes a moment
        kill(left)
        time.sleep(0.02)
    return len(left)
