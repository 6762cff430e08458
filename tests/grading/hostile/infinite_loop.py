# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() never returns: a busy loop. Expected: timeout (or cpu_limit under a tighter CPU limit)."""
_schedule = Scheduler.schedule


def schedule(self):
    while True:
        pass


Scheduler.schedule = schedule
