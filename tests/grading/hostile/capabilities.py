# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Check its own privileges: effective capabilities, root uid, network.

Expected: ok at every level (no capability, not root; no network at the namespace levels); had it any,
schedule() returns a list.
"""
import os
import socket

with open("/proc/self/status") as _f:
    _caps = int([x for x in _f if x.startswith("CapEff:")][0].split()[1], 16)
_privileged = _caps != 0 or os.getuid() == 0 or os.geteuid() == 0
if _privileged:
    Scheduler.schedule = lambda self: ["privileged"]
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1).close()
    _network = True
except OSError:
    _network = False
if _network and os.path.isdir("/sandbox"):
    Scheduler.schedule = lambda self: ["network"]
