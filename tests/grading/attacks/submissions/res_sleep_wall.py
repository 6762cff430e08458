# ruff: noqa
"""Sleep just under the per-workload wall limit on every workload, to hold a grading slot for long.

Attack: every Scheduler() sleeps 1.8 s (the limit per workload is 2 s, and sleeping costs no
CPU), then behaves correctly. No single workload times out, so the hang breaker (max_timeouts)
never fires and the grader spends the whole run budget (600 s) on this entry, plus the
exploration run, while the class waits.

Expected: score 0 with status timeout (every item's cases take far longer than its limit), the
same on a regrade, and the class run still finishes with every classmate graded.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import time as _time

_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def __init__(self, *args, **kwargs) -> None:
        _time.sleep(1.8)
        super().__init__(*args, **kwargs)
