# ruff: noqa
"""Leave a working scheduler in the machine-wide temporary folders for a classmate to pick up.

Attack: /tmp, /var/tmp and /dev/shm are world-writable and shared by every sandbox of the class
(and by later runs). At import this submission writes its own source to
/tmp/schedcheck-attack-drop.py, /var/tmp/schedcheck-attack-drop.py and
/dev/shm/schedcheck-attack-drop.py (a few KB each). `shared_tmp_pickup` has no scheduler and
looks there. It is the correct scheduler.

Expected: graded as the correct scheduler it wraps: 100; the dropped files do not outlive its
sandbox (none left after the run) and are never visible to another submission.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import os as _os


def _drop() -> None:
    try:
        with open(__file__, "rb") as f:
            source = f.read()
    except OSError:
        return
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        for name in ("schedcheck-attack-drop.py", f"schedcheck-attack-drop.{_os.getpid()}.{_os.getuid()}.py"):
            try:
                fd = _os.open(f"{folder}/{name}", _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL, 0o644)
            except OSError:
                continue
            with _os.fdopen(fd, "wb") as f:
                f.write(source)
            break


_drop()
