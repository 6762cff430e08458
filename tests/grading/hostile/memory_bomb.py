# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() allocates without bound. Expected: memory (MemoryError under RLIMIT_AS)."""
_hoard = []


def schedule(self):
    while True:
        _hoard.append(bytearray(1 << 24))


Scheduler.schedule = schedule
