# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""update() calls sys.exit(3): SystemExit is a BaseException. Expected: exception naming SystemExit."""
import sys


def update(self):
    sys.exit(3)


Scheduler.update = update
