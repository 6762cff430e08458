# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() reports a negative token count. Expected: judged, H.nonpositive (and I2), as `check` judges it."""
_schedule = Scheduler.schedule


def schedule(self):
    return {seq_id: -n for seq_id, n in _schedule(self).items()}


Scheduler.schedule = schedule
