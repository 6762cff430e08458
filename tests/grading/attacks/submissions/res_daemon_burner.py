# ruff: noqa
"""A double-forked, setsid daemon that burns CPU after the submission's process is gone.

Attack: at import (once per process) it forks, the child calls setsid() and forks again, and the
grandchild ignores SIGXCPU/SIGTERM/SIGHUP, closes its descriptors, lowers its priority and spins
for at most 60 s. If it is still alive 15 s after it started (long after its own sandbox run has
ended: a batch takes well under a second), it has escaped the teardown and writes a marker.
The submission itself is the correct scheduler.

Expected: graded as the correct scheduler it wraps: 100; every daemon is killed with its
sandbox (no marker, no process left after the run, survivors 0).
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import signal as _signal
import time as _time

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


def _daemon() -> None:
    if _os.fork():
        return
    try:
        _os.setsid()
        if _os.fork():
            _os._exit(0)
        for sig in (_signal.SIGXCPU, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGINT):
            _signal.signal(sig, _signal.SIG_IGN)
        _os.closerange(3, 256)
        _os.nice(19)
        start = _time.monotonic()
        marked = False
        while _time.monotonic() - start < 60:
            for _ in range(100_000):
                pass
            if not marked and _time.monotonic() - start > 15:
                _mark("res_daemon_burner", f"daemon {_os.getpid()} alive 15 s after it started")
                marked = True
    finally:
        _os._exit(0)


_daemon()
