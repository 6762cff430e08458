# ruff: noqa
"""An exception class whose name is HTML/Markdown: the type name lands in every report.

Attack: reports name the exception's type (its __qualname__, up to 80 characters). This module
builds an exception class named `<script>alert(1)</script>**100/100**` with type() and raises it
from every update(). It has no scheduler of its own.

Expected: score 0 with status crashed; the type name is shown as inert text: the raw `<script>`
never appears in any output.
"""

from __future__ import annotations

Hostile = type("<script>alert(1)</script>**100/100**", (Exception,), {})


class Sequence:
    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id, self.prompt_len, self.max_tokens, self.output = seq_id, prompt_len, max_tokens, []


class Scheduler:
    def __init__(self, *args, **kwargs):
        self.waiting = []

    def add(self, seq):
        self.waiting.append(seq)

    def schedule(self):
        return {s.seq_id: s.prompt_len for s in self.waiting}

    def update(self):
        raise Hostile("the type name is the payload")
