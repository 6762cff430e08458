# ruff: noqa
"""Fill the shared disk: 150 files of 1 MiB in /var/tmp, left behind after the sandbox.

Attack: RLIMIT_FSIZE caps one file at 1 MiB, not how many files. Once (the first process that
finds the folder absent) it writes 150 files of 1 MiB (150 MB in all) to
/var/tmp/schedcheck-attack-fill/; a real attacker would loop until the disk is full. It is the
correct scheduler.

Expected: graded as the correct scheduler it wraps: 100; no file of it left outside its own
sandbox folder after the run (and a disk quota or a size-capped private tmpfs bounds it).
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import os as _os

_DIR = "/var/tmp/schedcheck-attack-fill"


def _fill() -> None:
    try:
        _os.mkdir(_DIR, 0o777)
    except OSError:
        return
    chunk = b"\0" * (1 << 20)
    for i in range(150):
        try:
            with open(f"{_DIR}/{i:03d}", "wb") as f:
                f.write(chunk)
        except OSError:
            break


_fill()
