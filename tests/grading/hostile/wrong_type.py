# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() returns a list of pairs instead of a dict. Expected: protocol, naming the type."""
_schedule = Scheduler.schedule


def schedule(self):
    return list(_schedule(self).items())


Scheduler.schedule = schedule
