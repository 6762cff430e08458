# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""The first schedule() writes 100 MB to stdout, then the scheduler behaves correctly.

Expected: ok (the rules say nothing about printing), stdout cut at the byte cap, truncation reported.
"""
import sys

_schedule = Scheduler.schedule
_flooded = []


def schedule(self):
    if not _flooded:
        _flooded.append(True)
        chunk = "x" * (1 << 20)
        for _ in range(100):
            sys.stdout.write(chunk)
        sys.stdout.flush()
    return _schedule(self)


Scheduler.schedule = schedule
