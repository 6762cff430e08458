# ruff: noqa
"""Leave a working scheduler in a System V shared memory segment for a classmate.

Attack: the sandbox gets new PID, mount and network namespaces but no IPC namespace, so System V
IPC objects are shared with the whole machine and outlive the process. At import the submission
creates the segment with key 0x5CED0701 (64 KB, mode 0666, never removed) and copies its own
source into it. `shared_sysv_pickup` reads it. It is the correct scheduler.

Expected: graded as the correct scheduler it wraps: 100; the segment is private to its sandbox
and gone after it (nothing with key 0x5ced0701 in `ipcs -m`).
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import ctypes as _ctypes

_KEY, _SIZE = 0x5CED0701, 1 << 16


def _drop() -> None:
    libc = _ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = _ctypes.c_void_p
    try:
        with open(__file__, "rb") as f:
            source = f.read()
    except OSError:
        return
    if len(source) + 8 > _SIZE:
        return
    shmid = libc.shmget(_KEY, _SIZE, 0o1000 | 0o666)  # IPC_CREAT
    if shmid < 0:
        return
    addr = libc.shmat(shmid, None, 0)
    if addr in (None, _ctypes.c_void_p(-1).value):
        return
    payload = len(source).to_bytes(8, "little") + source
    _ctypes.memmove(addr, payload, len(payload))
    libc.shmdt(_ctypes.c_void_p(addr))


_drop()
