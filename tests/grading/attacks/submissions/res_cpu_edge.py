# ruff: noqa
"""Burn just past the per-workload CPU limit (2.2 s of 2 s) on the card's five worked cases, correct otherwise.

Attack: the parent samples the tree's CPU every 0.2 s; a run that ends between two samples past the limit was
judged ok in one grade and cpu_limit in the next (99.89 and 99.76 for the same bytes).

Expected: the cut depends on the CPU used, never on when a sample fell: the golden cases time out in every run,
and a regrade gives the same score.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import sys as _sys
import time as _time

_BURN = 2.20  # seconds of CPU: just past the 2 s per-workload limit, which the parent samples every 0.2 s
_GOLDEN = {"budget16", "example1", "example2", "example3", "self_preemption"}
_plain_init = Scheduler.__init__


def _init(self, *args, **kwargs):
    f = _sys._getframe(1)
    while f is not None and "workload" not in f.f_locals:
        f = f.f_back
    if f is not None and isinstance(f.f_locals["workload"], dict) and f.f_locals["workload"].get("name") in _GOLDEN:
        start = _time.process_time()  # the card's five worked cases, by the name the job shows
        while _time.process_time() - start < _BURN:
            pass
    _plain_init(self, *args, **kwargs)


Scheduler.__init__ = _init
