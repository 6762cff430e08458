# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""After every update(), replace each sequence's output list with a list subclass that lies about its
contents and equality, so a harness reading seq.output through its methods would see other tokens.

Expected: read by its real items, never through its methods (the type is a note); since each wrapping copies
the previous LyingList through its lying __iter__, the real items are zeros: a finding on behaviour (I4).
"""
_update = Scheduler.update


class LyingList(list):
    def __iter__(self):
        return iter([0] * list.__len__(self))

    def __getitem__(self, index):
        return 0

    def __eq__(self, other):
        return True


def update(self):
    done = _update(self)
    for seq in list(self.waiting) + list(self.running):
        seq.output = LyingList(seq.output)
    return done


Scheduler.update = update
