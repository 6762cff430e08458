# ruff: noqa
"""Return values built to break the reader: bool and int-subclass counts, hostile keys and ids.

Attack: the correct scheduler, but what it returns is swapped for look-alikes, a different kind
per workload (by a process-local count): a count of 1 as True; counts as an int subclass whose
__eq__, __hash__ and __index__ raise; a key that is a str subclass whose __hash__ loops for 30 s;
update() returning a list subclass whose __iter__ lies; finished sequences whose seq_id property
raises SystemExit; a status whose .name is a property that spins for 30 s; sequences whose
a huge int (10**5000) as a count; counts as floats.

Expected: every workload with a swapped value fails as a protocol error (or a timeout for the
spinning ones): score below 100, the same on a regrade; no value is ever trusted through its
own methods; the class run finishes.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import time as _time

_MADE = [0]


class _Count(int):
    def __eq__(self, other):
        raise RuntimeError("__eq__ of a count")

    def __hash__(self):
        raise RuntimeError("__hash__ of a count")

    def __index__(self):
        raise RuntimeError("__index__ of a count")


class _Key(str):
    def __hash__(self):
        start = _time.monotonic()
        while _time.monotonic() - start < 30:
            pass
        return 0

    def __eq__(self, other):
        return True


class _LyingList(list):
    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


class _Status:
    @property
    def name(self):
        start = _time.monotonic()
        while _time.monotonic() - start < 30:
            pass
        return "RUNNING"


class _Finished:
    @property
    def seq_id(self):
        raise SystemExit(3)


_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _MADE[0] += 1
        self.kind = _MADE[0] % 8

    def schedule(self):
        batch = super().schedule()
        if self.kind == 0:
            return {k: (True if v == 1 else v) for k, v in batch.items()}
        if self.kind == 1:
            return {k: _Count(v) for k, v in batch.items()}
        if self.kind == 2:
            return {_Key(k): v for k, v in batch.items()}
        if self.kind == 3:
            return {k: v * 10**5000 for k, v in batch.items()}
        if self.kind == 7:
            return {k: float(v) for k, v in batch.items()}
        return batch

    def update(self):
        done = super().update()
        if self.kind == 4:
            return _LyingList(done)
        if self.kind == 5 and done:
            return [_Finished() for _ in done]
        if self.kind == 6:
            for seq in self.running:
                object.__setattr__(seq, "status", _Status())
        return done
