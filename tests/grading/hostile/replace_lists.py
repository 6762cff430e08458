# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""After every update(), replace each sequence's output list with a list subclass that lies about its
contents and equality, so a harness reading seq.output through its methods would see other tokens.

Expected: protocol, naming the non-list output, at the next sample_fn call.
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
