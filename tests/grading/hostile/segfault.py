# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""update() kills its own process with SIGSEGV, as a crash in C code would. Expected: signal, naming SIGSEGV."""
import os
import signal


def update(self):
    os.kill(os.getpid(), signal.SIGSEGV)


Scheduler.update = update
