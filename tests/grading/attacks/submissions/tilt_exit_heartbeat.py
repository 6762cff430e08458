# ruff: noqa
"""A real bug (a pool of 256 running lists, so only groups of more than 256 schedulers meet it) that hides the groups:
once eight schedulers are alive at once, it writes the supervisor's "exit" message to the report pipe, then sleeps,
writing a byte to stderr every 0.2 s. The parent took the exit as the worker's, cut the run's deadline, and counted
the bytes as activity, so the run was stopped by a wall clock, which is inconclusive where instances are compared:
100 against the bug's own 99.98 (from outside). Now an exit while the worker runs is a protocol error, and only a
whole message is progress (a tree that sleeps writing bytes is idle: a time-out).

Expected: no more than the bug earns alone, the same on a regrade.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import os as _os
import sys as _sys
import time as _time
import weakref as _weakref

_Base = Scheduler
_POOL = [[] for _ in range(256)]  # the bug: the running lists of a pool of 256, handed out in turn
_MADE = [0]
_LIVE = _weakref.WeakSet()


class Scheduler(_Base):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.running = _POOL[_MADE[0] % 256]
        self.running.clear()
        _MADE[0] += 1
        _LIVE.add(self)
        if len(_LIVE) >= 8 and len(_sys.argv) > 1 and _sys.argv[1].isdigit():
            _os.write(int(_sys.argv[1]), b'\n{"type":"exit","code":0,"signal":null,"cpu_ms":0}\n')
            while True:
                _time.sleep(0.2)
                _os.write(2, b".")
