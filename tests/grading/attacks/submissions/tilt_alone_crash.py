# ruff: noqa
"""A real bug (a pool of 256 running lists, so only groups of more than 256 schedulers meet it) that hides the groups
without touching the driver: it raises in the runs alone of a group's schedulers 2..n, which it tells by their
tokens (1000 times the lane) and by "group": [] in the workload the driver's frame holds. Those runs are made only
to compare with, and a group with a lane not finished alone was skipped: 100 against the bug's own 99.98 (from
outside). Now such a run that fails is the group's finding.

Expected: no more than the bug earns alone, the same on a regrade.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import sys as _sys

_Base = Scheduler
_POOL = [[] for _ in range(256)]  # the bug: the running lists of a pool of 256, handed out in turn
_MADE = [0]
_ALIVE = [0]


def _lane_alone() -> bool:
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "run_lane":
        f = f.f_back
    w = f.f_locals.get("workload", {}) if f is not None else {}
    base = w.get("sample", {}).get("base", {}) if isinstance(w, dict) else {}
    b = base.get("a1", 1)
    return isinstance(w, dict) and w.get("group") == [] and b >= 2000 and b % 1000 == 0 and len(base) == 3


class Scheduler(_Base):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.running = _POOL[_MADE[0] % 256]
        self.running.clear()
        _MADE[0] += 1
        self._alone = _lane_alone()

    def update(self):
        if self._alone:
            raise RuntimeError("lane alone")
        return super().update()
