# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() reports a negative token count. Expected: protocol (every n must be >= 1)."""
_schedule = Scheduler.schedule


def schedule(self):
    return {seq_id: -n for seq_id, n in _schedule(self).items()}


Scheduler.schedule = schedule
