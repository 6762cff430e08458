# ruff: noqa
"""A real bug (every instance shares one waiting queue) that turns off the two-instance probe in the driver it shares a
process with: it sets the driver's BESIDE bit to 0 through the caller's frames, so the probe is never paired and its
trace comes without the second instance. The parent took such a trace as a run alone and the bug scored 100 against
its own 98.62 (from outside). Now a probe that was answered and sent no "beside" is a protocol error.

Expected: no more than the bug earns alone, the same on a regrade.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import sys as _sys
from collections import deque as _deque

_Base = Scheduler
_SHARED = _deque()  # the bug: one waiting queue for every instance


def _switch_off() -> None:
    f = _sys._getframe(1)
    while f is not None:
        if "run_lane" in f.f_globals and "BESIDE" in f.f_globals:
            f.f_globals["BESIDE"] = 0
            return
        f = f.f_back


class Scheduler(_Base):
    def __init__(self, *args, **kwargs):
        _switch_off()
        super().__init__(*args, **kwargs)
        _SHARED.clear()
        self.waiting = _SHARED
