# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""The first schedule() of a process sends itself SIGRTMIN+3, which no code of the grader names.

Expected: signal, and the cause names SIGRTMIN+3 (the parent never raises on an unknown number).
"""
import os
import signal

Scheduler.schedule = lambda self: os.kill(os.getpid(), signal.SIGRTMIN + 3)
