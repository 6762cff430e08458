# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""update() calls os._exit(7), skipping every handler. Expected: exit with code 7."""
import os


def update(self):
    os._exit(7)


Scheduler.update = update
