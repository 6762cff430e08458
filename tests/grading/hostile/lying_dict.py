# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() returns a dict subclass whose __eq__ is always True and whose items() shows the right batch,
while its real contents double every n.

Expected: the trace holds the real contents (every n doubled), so a checker sees the lie.
"""
_schedule = Scheduler.schedule


class LyingDict(dict):
    def __init__(self, shown, real):
        super().__init__(real)
        self._shown = shown

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = None

    def items(self):
        return self._shown.items()

    def __iter__(self):
        return iter(self._shown)


def schedule(self):
    shown = _schedule(self)
    return LyingDict(shown, {seq_id: 2 * n for seq_id, n in shown.items()})


Scheduler.schedule = schedule
