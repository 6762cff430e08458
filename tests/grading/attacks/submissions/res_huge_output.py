# ruff: noqa
"""Print 30 MB to stdout and 30 MB to stderr at import, and more in every workload.

Attack: stdout and stderr belong to the submission and are piped to the grader; a flood costs
the parent reading time and memory if it keeps it, and the reports if it shows it. It writes
30 MiB to each stream at import (in 64 KiB chunks, no newline in 1 MiB stretches) and 64 KiB
per Scheduler(). It is the correct scheduler.

Expected: graded as the correct scheduler it wraps: 100, with a note that its output was
truncated; the class run finishes.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import sys as _sys

_CHUNK = "#" * (1 << 16)


def _flood(total: int) -> None:
    for stream in (_sys.stdout, _sys.stderr):
        try:
            for _ in range(total >> 16):
                stream.write(_CHUNK)
            stream.write("\n")
            stream.flush()
        except (OSError, ValueError):
            pass


_flood(30 << 20)
_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def __init__(self, *args, **kwargs) -> None:
        _flood(1 << 16)
        super().__init__(*args, **kwargs)
