# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() returns True for n = 1 (True == 1 in Python). Expected: protocol (bool is not int)."""
_schedule = Scheduler.schedule


def schedule(self):
    return {seq_id: True if n == 1 else n for seq_id, n in _schedule(self).items()}


Scheduler.schedule = schedule
