# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() forks until the OS refuses (at most 64 times, so it stays safe anywhere).

Expected: exception (the fork failure, under RLIMIT_NPROC), every forked process gone afterwards.
"""
import os
import time


def schedule(self):
    forked = 0
    try:
        while forked < 64:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            forked += 1
    except OSError as e:
        raise RuntimeError(f"forked {forked} processes, then {type(e).__name__}") from None
    raise RuntimeError(f"forked {forked} processes without hitting a limit")


Scheduler.schedule = schedule
