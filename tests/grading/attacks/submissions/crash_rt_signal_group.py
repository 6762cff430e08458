# ruff: noqa
"""Send a realtime signal to its own process group in every fifth workload of a process.

Attack: SIGRTMIN+3 has no handler by default and terminates whoever gets it. Sent with
killpg(0, ...) it reaches the worker and every process of its group: the supervisor too, unless
it is protected (the init of a PID namespace). Every fifth Scheduler() of a process does it;
otherwise it is the correct scheduler. It never signals outside its own process group.

Expected: the hit workloads crash (status crashed, score below 100), the same on a regrade, and
the class run finishes; the grader itself is never hit.
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
        if _MADE[0] % 5 == 0:
            _os.killpg(0, _signal.SIGRTMIN + 3)
        super().__init__(*args, **kwargs)
