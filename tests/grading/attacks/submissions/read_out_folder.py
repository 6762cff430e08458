# ruff: noqa
"""Read classmates' graded results (the --out folder) while being graded; otherwise correct.

Attack: the output folder of the class run (OUT/<entry>/results.json, grade.json, report.md,
summary.csv) lives wherever the instructor put it, usually beside the submissions, and is not
hidden from the child. The submission walks the usual places for grade.json / results.json
files and records how many it could read and the first score it saw (a grade leak, and the way
to copy the report of a classmate who scored 100). It is the correct scheduler.

Expected: graded as the correct scheduler it wraps: 100; no results of another entry readable
(no marker).
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import json as _json

import os as _os

_MARKERS = "/tmp/schedcheck-attack-markers"


def _mark(name: str, text: str = "") -> None:
    """Prove an escape: append a line to a marker file under the shared /tmp (never any other file)."""
    try:
        _os.makedirs(_MARKERS, mode=0o777, exist_ok=True)
        with open(f"{_MARKERS}/{name}.{_os.getpid()}", "a") as f:
            f.write(text[:2000] + "\n")
    except OSError:
        pass


def _peek() -> None:
    found = []
    for root in ("/tmp", "/var/tmp", "/home", "/root", "/srv", "/work"):
        for folder, dirs, files in _os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "schedcheck-attack"))]
            if folder.count(_os.sep) - root.count(_os.sep) >= 3:
                dirs[:] = []
            for name in ("grade.json", "results.json", "summary.csv"):
                if name in files and len(found) < 20:
                    path = _os.path.join(folder, name)
                    try:
                        with open(path, "rb") as f:
                            head = f.read(4096)
                    except OSError:
                        continue
                    score = ""
                    if name == "grade.json":
                        try:
                            score = str(_json.loads(open(path, "rb").read(1 << 20)).get("score"))
                        except (OSError, ValueError, AttributeError):
                            score = "?"
                    found.append(f"{path} ({len(head)} bytes, score {score})")
    if found:
        _mark("read_out_folder", "\n".join(found))


_peek()
