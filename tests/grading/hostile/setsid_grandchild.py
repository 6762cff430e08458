# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() leaves a grandchild in its own session (it escapes killpg), then hangs.

Expected: timeout, and no process with the marker argv 'sleep 913.25' alive afterwards.
"""
import os
import time


def schedule(self):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "913.25"])
        os._exit(0)
    time.sleep(10**6)


Scheduler.schedule = schedule
