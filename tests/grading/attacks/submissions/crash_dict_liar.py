# ruff: noqa
"""A dict subclass that lies through every method, over correct real contents.

Attack: schedule() returns a dict subclass whose real items are the correct batch but whose
items(), keys(), values(), __iter__, __len__, __getitem__, get, __contains__, copy and __eq__
all report an empty or wrong batch, and whose __hash__ and __repr__ raise. __class__ claims to be
dict. A reader that goes through the overrides sees garbage; one that reads the real items sees
the correct scheduler.

Expected: graded by its real items, as the correct scheduler it wraps: 100; the overrides are
never called (no crash, no protocol error).
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----


class _Liar(dict):
    def items(self):
        return [("ghost", 1)]

    def keys(self):
        return ["ghost"]

    def values(self):
        return [999]

    def __iter__(self):
        return iter(["ghost"])

    def __len__(self):
        return 0

    def __getitem__(self, key):
        return 999

    def get(self, key, default=None):
        return 999

    def __contains__(self, key):
        return False

    def copy(self):
        return {}

    def __eq__(self, other):
        return True

    def __hash__(self):
        raise RuntimeError("hashed the batch")

    def __repr__(self):
        raise RuntimeError("repr of the batch")

    @property
    def __class__(self):
        return dict


_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def schedule(self):
        return _Liar(super().schedule())
