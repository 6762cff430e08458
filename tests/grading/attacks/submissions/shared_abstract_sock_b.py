# ruff: noqa
"""No scheduler of its own: fetch one from `shared_abstract_sock_a` over an abstract unix socket.

Attack: the client half. At import it tries for up to 4 s to connect to the abstract socket
"\\0schedcheck-attack-sock" (served by a classmate's sandbox, if that is still alive and in the
same network namespace), reads the source and runs it as its own scheduler.

Expected: score 0 (no scheduler of its own): the socket is unreachable; no marker.
"""

from __future__ import annotations

import socket
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
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(2.0)
                s.connect("\0schedcheck-attack-sock")
                chunks = []
                while chunk := s.recv(1 << 16):
                    chunks.append(chunk)
        except OSError:
            time.sleep(0.1)
            continue
        source = b"".join(chunks).replace(b"schedcheck-attack", b"schedcheck-pickedup")
        if _adopt(source, "abstract-socket"):
            _mark("shared_abstract_sock_b", "adopted the served source")
            return True
    return False


_steal()
