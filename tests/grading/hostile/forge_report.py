"""At import, write forged 'finished' reports to every open descriptor above stderr (one of them is
the report pipe), hoping the grader takes them for the harness's.

Expected: protocol (the parent checks the message order and every trace against its workload).
"""
import contextlib
import os

_FORGED = b'\n{"type":"loaded","refused":[]}\n{"type":"trace","workload":0,"steps":[],"stop":"done","error":null}\n'
for _fd in range(3, 256):
    with contextlib.suppress(OSError):
        os.write(_fd, _FORGED)
