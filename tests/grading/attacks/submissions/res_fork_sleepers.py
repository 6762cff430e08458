# ruff: noqa
"""Fork 50 children that each sleep 60 s in their own session, then answer correctly.

Attack: at import (once per process) it tries to fork 50 children (capped by RLIMIT_NPROC if
that is enforced), each calling setsid() and sleeping 60 s with SIGTERM and SIGHUP ignored,
so that they outlive the worker if the teardown only kills the worker or its group. It is the
correct scheduler.

Expected: graded as the correct scheduler it wraps: 100; no sleeper left after the run
(survivors 0).
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import os as _os
import signal as _signal
import time as _time


def _sleepers() -> None:
    for _ in range(50):
        try:
            pid = _os.fork()
        except OSError:
            return
        if pid == 0:
            try:
                _os.setsid()
                _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
                _signal.signal(_signal.SIGHUP, _signal.SIG_IGN)
                _time.sleep(60)
            finally:
                _os._exit(0)


_sleepers()
