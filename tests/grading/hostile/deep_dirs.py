# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Build a folder nested 1,500 levels deep (and one with an undecodable name) where it may write, then behave.

Expected: ok; cleaning up after the child never fails (nothing it writes lands on the grader's disk
at the namespace levels; the process-group level removes it without recursion).
"""
import os

_base = os.environ.get("TMPDIR", "/tmp")
try:
    os.chdir(_base)
    for _ in range(1500):
        os.mkdir("d")
        os.chdir("d")
    os.mkdir(b"\xff\xfe-odd")
except OSError:
    pass
os.chdir("/")
