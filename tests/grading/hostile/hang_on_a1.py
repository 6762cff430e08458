# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() hangs only when a sequence named 'a1' exists, so one workload hangs and the others run.

Expected: timeout for that workload alone; the next workload runs in a fresh child and is ok.
"""
import time

_schedule = Scheduler.schedule


def schedule(self):
    if any(seq.seq_id == "a1" for seq in list(self.waiting) + self.running):
        time.sleep(10**6)
    return _schedule(self)


Scheduler.schedule = schedule
