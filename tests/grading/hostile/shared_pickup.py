# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Pick up what shared_drop left: a file in /tmp, /var/tmp, /dev/shm, or its System V segment.

Expected: ok at the namespace levels (private /tmp, /dev/shm and IPC); had it found anything,
schedule() returns a list.
"""
import ctypes
import os

_seen = [d for d in ("/tmp", "/var/tmp", "/dev/shm") if os.path.exists(f"{d}/schedcheck-hostile-drop")]
try:
    if ctypes.CDLL(None, use_errno=True).shmget(0x5C4ED, 0, 0) >= 0:
        _seen.append("sysv")
except OSError:
    pass
if _seen:
    Scheduler.schedule = lambda self: [_seen]
