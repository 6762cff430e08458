# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() names a sequence that was never added. Expected: judged, H.unknown_id naming it, as `check` judges it."""
_schedule = Scheduler.schedule


def schedule(self):
    batch = _schedule(self)
    batch["ghost"] = 1
    return batch


Scheduler.schedule = schedule
