# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() returns floats (2.0 == 2 in Python). Expected: protocol (an n must be an exact int)."""
_schedule = Scheduler.schedule


def schedule(self):
    return {seq_id: float(n) for seq_id, n in _schedule(self).items()}


Scheduler.schedule = schedule
