# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Every Scheduler() leaves a setsid daemon spinning forever, then is correct and quick.

Expected: ok on every workload, the same on a loaded machine: what a workload started is killed when
its trace arrives, so no daemon burns into the next workload; nothing survives the run.
"""
import os

_init = Scheduler.__init__


def __init__(self, *args, **kwargs):
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                pass
        os._exit(0)
    os.waitpid(middle, 0)  # the daemon is orphaned (adopted by the supervisor); no zombie is left here
    _init(self, *args, **kwargs)


Scheduler.__init__ = __init__
