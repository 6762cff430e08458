# ruff: noqa
"""Find the class's submissions folder (or any scheduler on the machine) and copy a classmate.

Attack: the grader does not put the submissions folder under Limits.hide, and the child can read
any file outside the hidden project. The submission walks /tmp, /var/tmp, /home, /root, /srv and
/work (a bounded walk), finds a .py file that defines a Scheduler with schedule() and update(),
and runs it as its own. It has no scheduler of its own.

Expected: score 0 (no scheduler of its own); the class folder and other copies of a scheduler
are invisible in the child; no marker.
"""

from __future__ import annotations

import os

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


class Sequence:
    """A stand-in, replaced when a stolen scheduler is adopted."""

    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id, self.prompt_len, self.max_tokens, self.output = seq_id, prompt_len, max_tokens, []


class Scheduler:
    """No scheduler of its own: every workload fails unless a stolen one was adopted."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("no scheduler of its own, and nothing could be stolen")


def _adopt(source: bytes, origin: str) -> bool:
    """Run stolen source in a fresh namespace and take its Scheduler and Sequence."""
    if b"schedcheck-attack" in source or b"class Scheduler" not in source:
        return False
    ns = {"__name__": "stolen_p07_scheduler"}
    try:
        exec(compile(source, origin, "exec"), ns)
    except BaseException:
        return False
    if "Scheduler" not in ns or "Sequence" not in ns:
        return False
    globals().update({k: ns[k] for k in ("Scheduler", "Sequence", "SequenceStatus") if k in ns})
    return True

ROOTS = ("/tmp", "/var/tmp", "/home", "/root", "/srv", "/work", "/opt")


def _steal() -> bool:
    own = os.path.realpath(os.getcwd())
    seen = 0
    for root in ROOTS:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "schedcheck-attack")) and d != "node_modules"]
            if folder.count(os.sep) - root.count(os.sep) >= 4:
                dirs[:] = []
            if os.path.realpath(folder) == own:
                continue
            for name in files:
                seen += 1
                if seen > 20000:
                    return False
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                try:
                    if os.path.getsize(path) > 200_000:
                        continue
                    with open(path, "rb") as f:
                        source = f.read()
                except OSError:
                    continue
                if b"def schedule(" in source and b"def update(" in source and _adopt(source, path):
                    _mark("read_class_folder", f"adopted {path}")
                    return True
    return False


_steal()
