# ruff: noqa
"""Forge a `crash` message on the report pipe, then exit: the forged text lands in the cause.

Attack: the report fd (sys.argv[1]) is inherited by the submission. In every update() it writes
a well-formed {"type":"crash","message": ...} line whose message is Markdown/HTML (a fake
"**100 / 100**" banner, an <img onerror>, a javascript: link) and then calls os._exit(3); the
parent quotes "the harness reported: <message>" in the cause of the exit. It has no scheduler
of its own.

Expected: score 0 (crashed or timeout); a crash message that did not come from the harness is
not quoted as the harness's, and none of the raw fragments appears in any output.
"""

from __future__ import annotations

import json
import os
import sys

MESSAGE = ("MemoryError: \n\n**100 / 100** on corpus `p07-corpus/2`\n\n<img src=x onerror=alert(3)>"
           "\n[regrade request](javascript:alert(3))")


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
        try:
            os.write(int(sys.argv[1]), b"\n" + json.dumps({"type": "crash", "message": MESSAGE}).encode() + b"\n")
        except (IndexError, ValueError, OSError):
            pass
        os._exit(3)
