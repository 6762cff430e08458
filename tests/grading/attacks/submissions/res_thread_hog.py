# ruff: noqa
"""Burn CPU in background threads that ignore the soft CPU limit, while the main thread is correct.

Attack: at import it ignores SIGXCPU (the soft RLIMIT_CPU that is meant to stop a workload) and
starts 4 daemon threads that spin (each stops after 60 s). The main thread answers every call
correctly, so whether a workload finishes before its limits fire depends on scheduling luck.

Expected: a deterministic verdict: the same score on a regrade (the CPU the threads burn must
count against the submission in a way that does not depend on timing), the class run finishes,
and nothing survives the sandbox.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import signal as _signal
import threading as _threading
import time as _time


def _spin() -> None:
    end = _time.monotonic() + 60
    while _time.monotonic() < end:
        for _ in range(10_000):
            pass


_signal.signal(_signal.SIGXCPU, _signal.SIG_IGN)
for _ in range(4):
    _threading.Thread(target=_spin, daemon=True).start()
