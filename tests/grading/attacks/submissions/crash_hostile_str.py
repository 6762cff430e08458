# ruff: noqa
"""Raise exceptions whose message objects loop, raise, or are 10 MB long.

Attack: the driver turns an exception into a message with BaseException.__str__, which calls
str() on a lone argument. The first Scheduler() of every fourth process-local count raises an
exception whose argument's __str__ spins for 30 s; others raise one whose __str__ raises
RecursionError, one whose __str__ returns a str subclass with a hostile __len__, or a 10 MB
message. Every update() raises.

Expected: score 0 with status crashed or timeout (every workload fails), the same on a regrade,
messages truncated in the reports, and the class run finishes.
"""

from __future__ import annotations

import time

_MADE = [0]


class _Spins:
    def __str__(self) -> str:
        start = time.monotonic()
        while time.monotonic() - start < 30:
            pass
        return "spun"


class _Raises:
    def __str__(self) -> str:
        raise RecursionError("str of the message raised")

    def __repr__(self) -> str:
        raise RecursionError("repr of the message raised")


class _Weird(str):
    def __len__(self) -> int:
        raise ValueError("len of the message")


class _Subclassed:
    def __str__(self) -> str:
        return _Weird("a str subclass as message")


class Sequence:
    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id, self.prompt_len, self.max_tokens, self.output = seq_id, prompt_len, max_tokens, []


class Scheduler:
    def __init__(self, *args, **kwargs):
        _MADE[0] += 1
        self.kind = _MADE[0] % 4
        self.waiting = []

    def add(self, seq):
        self.waiting.append(seq)

    def schedule(self):
        return {s.seq_id: s.prompt_len for s in self.waiting}

    def update(self):
        if self.kind == 0:
            raise ValueError(_Spins())
        if self.kind == 1:
            raise ValueError(_Raises())
        if self.kind == 2:
            raise ValueError(_Subclassed())
        raise ValueError("x" * (10 << 20))
