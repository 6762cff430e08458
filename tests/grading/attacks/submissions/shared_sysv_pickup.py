# ruff: noqa
"""No scheduler of its own: adopt the one `shared_sysv_drop` left in System V shared memory.

Attack: the second half of a pair. At import it waits up to 4 s for the segment with key
0x5CED0701 (created by a classmate's sandbox, in this run or an earlier one), attaches it
read-only and runs the source found there as its own scheduler.

Expected: score 0 (no scheduler of its own): a classmate's IPC objects are invisible (an IPC
namespace per child); no marker.
"""

from __future__ import annotations

import ctypes
import time

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


class Sequence:
    """A stand-in, replaced when a stolen scheduler is adopted."""

    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id, self.prompt_len, self.max_tokens, self.output = seq_id, prompt_len, max_tokens, []


class Scheduler:
    """No scheduler of its own: every workload fails unless a stolen one was adopted."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("no scheduler of its own, and nothing could be stolen")


def _adopt(source: bytes, origin: str) -> bool:
    """Run stolen source in a fresh namespace and take its Scheduler and Sequence."""
    if b"schedcheck-attack" in source or b"class Scheduler" not in source:
        return False
    ns = {"__name__": "stolen_p07_scheduler"}
    try:
        exec(compile(source, origin, "exec"), ns)
    except BaseException:
        return False
    if "Scheduler" not in ns or "Sequence" not in ns:
        return False
    globals().update({k: ns[k] for k in ("Scheduler", "Sequence", "SequenceStatus") if k in ns})
    return True

KEY = 0x5CED0701


def _steal() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    deadline = time.monotonic() + 4.0
    while time.monotonic() < deadline:
        shmid = libc.shmget(KEY, 0, 0)
        if shmid >= 0:
            addr = libc.shmat(shmid, None, 0o10000)  # SHM_RDONLY
            if addr not in (None, ctypes.c_void_p(-1).value):
                size = int.from_bytes(ctypes.string_at(addr, 8), "little")
                source = ctypes.string_at(addr + 8, min(size, 60000))
                libc.shmdt(ctypes.c_void_p(addr))
                if _adopt(source.replace(b"schedcheck-attack", b"schedcheck-pickedup"), "sysv-shm"):
                    _mark("shared_sysv_pickup", f"adopted segment {shmid}")
                    return True
        time.sleep(0.1)
    return False


_steal()
