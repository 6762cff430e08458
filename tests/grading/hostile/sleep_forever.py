# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() blocks without using CPU, which RLIMIT_CPU cannot see. Expected: timeout (wall clock)."""
import time


def schedule(self):
    time.sleep(10**6)


Scheduler.schedule = schedule
