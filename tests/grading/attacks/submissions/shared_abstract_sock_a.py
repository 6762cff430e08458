# ruff: noqa
"""Serve a working scheduler on an abstract unix socket for a classmate (the server half).

Attack: abstract unix sockets have no file and live in the network namespace. At import this
submission forks a server (at most one per process, exiting after 60 s) bound to the abstract
name "\\0schedcheck-attack-sock" that sends its own source to whoever connects.
`shared_abstract_sock_b` connects to it. It is the correct scheduler.

Expected: graded as the correct scheduler it wraps: 100; the server dies with its sandbox and
the socket is unreachable from any other sandbox (a network namespace per child); no server
process left after the run.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import os as _os
import socket as _socket
import time as _time

_NAME = "\0schedcheck-attack-sock"


def _serve() -> None:
    try:
        with open(__file__, "rb") as f:
            source = f.read()
        server = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        server.bind(_NAME)
    except OSError:
        return
    server.listen(8)
    if _os.fork():
        server.close()
        return
    try:
        server.settimeout(1.0)
        end = _time.monotonic() + 60
        while _time.monotonic() < end:
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(source)
    finally:
        _os._exit(0)


_serve()
