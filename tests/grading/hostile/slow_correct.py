# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Correct but slow: every Scheduler() burns 100,000 loop iterations of CPU (milliseconds).

Expected: ok, the same verdict on a loaded machine (limits count CPU time); its workloads report
a CPU time well above a correct quick submission's.
"""
_init = Scheduler.__init__


def __init__(self, *args, **kwargs):
    n = 0
    while n < 100_000:
        n += 1
    _init(self, *args, **kwargs)


Scheduler.__init__ = __init__
