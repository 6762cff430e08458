# ruff: noqa
"""Exhaust inodes and slow the cleanup: 5000 files in its own folder and 5000 in /tmp.

Attack: once per process it creates 5000 empty files in its sandbox folder (which the parent
must delete after every child) and, once per machine, 5000 more in
/tmp/schedcheck-attack-many/, which nobody deletes. It is the correct scheduler.

Expected: graded as the correct scheduler it wraps: 100; its sandbox folder is removed and
nothing is left in /tmp after the run.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import os as _os

_SHARED = "/tmp/schedcheck-attack-many"


def _spawn_files() -> None:
    targets = [_os.path.join(_os.getcwd(), "many")]
    try:
        _os.mkdir(_SHARED, 0o777)
        targets.append(_SHARED)
    except OSError:
        pass
    for folder in targets:
        try:
            _os.makedirs(folder, exist_ok=True)
            for i in range(5000):
                _os.close(_os.open(f"{folder}/f{i:05d}", _os.O_CREAT | _os.O_WRONLY, 0o644))
        except OSError:
            pass


_spawn_files()
