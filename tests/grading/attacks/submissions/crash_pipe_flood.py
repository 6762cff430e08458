# ruff: noqa
"""Flood the grader's report pipe with 8 MB lines that never end.

Attack: the report fd is passed on the child's command line (sys.argv[1]) and inherited by the
submission. At import it writes 8 MiB of "{" without a newline (the parent buffers a partial
line, re-joining it on every read) and then a forged {"type":"bye"} line. Every fresh child
(one per failed workload) does it again. It has no scheduler of its own.

Expected: score 0 (crashed, "does not load" or timeout: its own reports are malformed), the parent's memory and
time stay bounded, the class run finishes and classmates keep their grades.
"""

from __future__ import annotations

import os
import sys


def _flood() -> None:
    try:
        fd = int(sys.argv[1])
    except (IndexError, ValueError):
        return
    chunk = b"{" * (1 << 16)
    try:
        for _ in range(128):
            os.write(fd, chunk)
        os.write(fd, b'\n{"type":"bye"}\n')
    except OSError:
        pass


_flood()


class Sequence:
    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id, self.prompt_len, self.max_tokens, self.output = seq_id, prompt_len, max_tokens, []


class Scheduler:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("no scheduler: this entry only floods the report pipe")
