# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""update() raises a BaseException subclass that is not an Exception. Expected: exception naming Meltdown."""


class Meltdown(BaseException):
    pass


def update(self):
    raise Meltdown("the reactor is gone")


Scheduler.update = update
