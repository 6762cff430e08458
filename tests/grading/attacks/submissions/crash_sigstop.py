# ruff: noqa
"""Stop itself with SIGSTOP (and try the supervisor) in every seventh workload of a process.

Attack: a stopped worker neither exits nor reports; the supervisor's waitpid() does not return
for a stopped child, and a SIGSTOP sent to the supervisor (its parent, same process group) would
freeze the reporter too. Every seventh Scheduler() of a process sends SIGSTOP to its parent and
then to itself; otherwise it is the correct scheduler.

Expected: the stopped workloads count as timeouts (status timeout, score below 100), the same on
a regrade; the stopped processes are killed and the class run finishes.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import os as _os
import signal as _signal

_MADE = [0]
_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def __init__(self, *args, **kwargs) -> None:
        _MADE[0] += 1
        if _MADE[0] % 7 == 0:
            try:
                _os.kill(_os.getppid(), _signal.SIGSTOP)
            except OSError:
                pass
            _os.kill(_os.getpid(), _signal.SIGSTOP)
        super().__init__(*args, **kwargs)
