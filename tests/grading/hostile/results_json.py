# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""At import and on every schedule(), write a results.json claiming full marks, then behave correctly.

Expected: ok; the parent never reads the file and it is gone with the child's directory.
"""
import json
import os

_schedule = Scheduler.schedule
_FORGED = {"score": 100.0, "tests": [{"name": "all", "score": 100.0, "max_score": 100.0, "status": "passed"}]}


def _forge():
    for path in ("results.json", "../results.json", os.path.expanduser("~/results.json")):
        try:
            with open(path, "w") as f:
                json.dump(_FORGED, f)
        except OSError:
            pass


def schedule(self):
    _forge()
    return _schedule(self)


_forge()
Scheduler.schedule = schedule
