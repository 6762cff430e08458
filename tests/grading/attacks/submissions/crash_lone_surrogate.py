# ruff: noqa
"""An exception message holding a lone surrogate (and a NUL), which UTF-8 cannot encode.

Attack: every update() raises ValueError("\\ud800 ..."). The child's JSON encoder escapes it as
\\ud800, the parent decodes it back to a str holding a lone surrogate, and that text flows into
the cause, the item outputs and the notes, which are written as UTF-8. It has no scheduler of its
own.

Expected: score 0 with status crashed; every file of the entry is written (the text sanitised),
the class run finishes, and classmates keep their grades.
"""

from __future__ import annotations


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
        raise ValueError("lone surrogate \ud800 and NUL \x00 in the message")
