# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Every Scheduler() forks a child that spins for 30 s and waits for it: the worker itself uses no CPU.

Expected: cpu_limit (the CPU of the whole process tree counts, not the worker's alone); nothing survives.
"""
import os

_init = Scheduler.__init__


def __init__(self, *args, **kwargs):
    child = os.fork()
    if child == 0:
        n = 0
        while n < 3_000_000_000:
            n += 1
        os._exit(0)
    os.waitpid(child, 0)
    _init(self, *args, **kwargs)


Scheduler.__init__ = __init__
