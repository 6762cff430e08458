# ruff: noqa
"""No scheduler of its own: adopt the one `shared_tmp_drop` left in /tmp, /var/tmp or /dev/shm.

Attack: the second half of a pair. At import it waits up to 4 s for a file
schedcheck-attack-drop*.py in /tmp, /var/tmp or /dev/shm (left there by a classmate's
sandbox, in this run or an earlier one) and runs it as its own scheduler.

Expected: score 0 (no scheduler of its own): nothing a classmate's sandbox wrote is visible;
no marker. Its grade must not depend on which classmates were graded before it.
"""

from __future__ import annotations

import glob
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
    deadline = time.monotonic() + 4.0
    while time.monotonic() < deadline:
        for path in sorted(glob.glob("/tmp/schedcheck-attack-drop*.py") + glob.glob("/var/tmp/schedcheck-attack-drop*.py")
                           + glob.glob("/dev/shm/schedcheck-attack-drop*.py")):
            try:
                with open(path, "rb") as f:
                    source = f.read(1 << 20).replace(b"schedcheck-attack", b"schedcheck-pickedup")
            except OSError:
                continue
            if _adopt(source, path):
                _mark("shared_tmp_pickup", f"adopted {path}")
                return True
        time.sleep(0.1)
    return False


_steal()
