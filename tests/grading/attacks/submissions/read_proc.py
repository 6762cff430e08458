# ruff: noqa
"""Look through /proc for the grader: other processes, their environ and cmdline, fds, /proc/1/root.

Attack: reads /proc/<pid>/cmdline and environ of every visible process (the grader's command
line names the submissions and output folders; a parent's environment may hold secrets), lists
/proc/self/fd and /proc/1/fd for inherited descriptors of the parent (for example a pipe of a
classmate, or an fd on the project), and tries /proc/1/root/work/main/impl/scheduler.py and
/proc/<pid>/cwd of every process to reach files hidden from its own mount namespace. It is the
correct scheduler; it only records what it saw.

Expected: graded as the correct scheduler it wraps: 100; only its own sandbox's processes are
visible, no inherited fd beyond the report pipe and stdio, the project unreachable (no marker).
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import os as _os

_MARKERS = "/tmp/schedcheck-attack-markers"


def _mark(name: str, text: str = "") -> None:
    """Prove an escape: append a line to a marker file under the shared /tmp (never any other file)."""
    try:
        _os.makedirs(_MARKERS, mode=0o777, exist_ok=True)
        with open(f"{_MARKERS}/{name}.{_os.getpid()}", "a") as f:
            f.write(text[:2000] + "\n")
    except OSError:
        pass


def _own(pid: str) -> bool:
    """A process of this sandbox: it runs as our uid (the sandbox's own)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[1]) == _os.getuid()
    except (OSError, ValueError, IndexError):
        pass
    return False


def _peek() -> None:
    seen = []
    for name in _os.listdir("/proc"):
        if not name.isdigit() or _own(name):
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read(4096).replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmd = "?"
        seen.append(f"pid {name} outside the sandbox: {cmd[:300]}")
        for rel in ("root/work/main/impl/scheduler.py", "cwd/impl/scheduler.py"):
            try:
                with open(f"/proc/{name}/{rel}", "rb") as f:
                    if f.read(64):
                        seen.append(f"read /proc/{name}/{rel}")
            except OSError:
                pass
    try:
        with open("/proc/1/root/work/main/impl/scheduler.py", "rb") as f:
            if f.read(64):
                seen.append("read /proc/1/root/work/main/impl/scheduler.py")
    except OSError:
        pass
    for pid in ("self", "1"):
        try:
            for fd in _os.listdir(f"/proc/{pid}/fd"):
                target = _os.readlink(f"/proc/{pid}/fd/{fd}")
                if int(fd) > 2 and not target.startswith(("pipe:", "/dev/null", "/proc")):
                    seen.append(f"/proc/{pid}/fd/{fd} -> {target}")
        except OSError:
            pass
    if seen:
        _mark("read_proc", "\n".join(seen))


_peek()
