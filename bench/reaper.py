"""``python -m bench.reaper OUT.json COMMAND...``: run COMMAND as the reaper of every orphan below it.

A sandbox child's processes are killed together with their parents, so nothing waits for them and
their CPU time is counted in no process's children (init reaps them). Run as a child subreaper, this
process adopts and reaps them itself and writes OUT.json: ``command`` is the CPU seconds of COMMAND and
of what it reaped (the grader: its workers, the sandboxes' launchers), ``adopted`` those of every orphan
reaped here (the rest of the sandboxes' trees), ``code`` COMMAND's exit code, which is also this
process's. Orphans are reaped the moment they end, as init would, so the run is not slowed.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
LINGER = 10.0  # seconds to wait for orphans still running after COMMAND ended


def cpu(usage: resource.struct_rusage | None) -> float:
    return 0.0 if usage is None else usage.ru_utime + usage.ru_stime


def main(argv: list[str]) -> int:
    out, command = argv[0], argv[1:]
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    proc = subprocess.Popen(command)
    code, mine, adopted, deadline = None, 0.0, 0.0, float("inf")
    while True:
        try:
            pid, status, usage = os.wait4(-1, 0 if code is None else os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:  # COMMAND ended and an orphan still runs: give it a moment, then stop waiting
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
            continue
        if pid == proc.pid:
            code, mine, deadline = os.waitstatus_to_exitcode(status), cpu(usage), time.monotonic() + LINGER
            proc.returncode = code  # reaped here: Popen must not wait for it again
        else:
            adopted += cpu(usage)
    with open(out, "w") as f:
        json.dump({"command": round(mine, 3), "adopted": round(adopted, 3), "code": code}, f)
    return code if code is not None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
