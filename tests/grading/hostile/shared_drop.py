# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Leave state behind for a later run: a file in /tmp, /var/tmp and /dev/shm, and a System V segment.

Expected: ok; at the namespace levels nothing of it outlives the child (shared_pickup finds nothing).
"""
import ctypes

for _d in ("/tmp", "/var/tmp", "/dev/shm"):
    try:
        with open(f"{_d}/schedcheck-hostile-drop", "w") as _f:
            _f.write("CHEAT")
    except OSError:
        pass
try:
    _libc = ctypes.CDLL(None, use_errno=True)
    _libc.shmget(0x5C4ED, 4096, 0o1000 | 0o666)  # IPC_CREAT
except OSError:
    pass
