# ruff: noqa
"""Hide a shared-dict bug from the fresh-dict probe by inspecting the caller's frame.

Attack: API.md says mutating the dict schedule() returns must not change what update() does. This
submission returns its internal batch dict itself, so a caller that clears it breaks update(): the
bug the grader's fresh-dict probe (every tenth case re-run with the returned dicts cleared) is
there to catch. Before returning, it looks at the calling frame: when the driver's local `mutate`
is true (the probe run) it returns a copy, so the probe sees a clean submission; every scored run
gets the shared dict.

Expected: the hygiene finding is still made (the probe must be indistinguishable from a scored
run): the `differential` item (checks differential, hygiene, liveness) loses points, so the score
is below 100 and some item fails.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import sys as _sys

_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def schedule(self) -> dict[str, int]:
        fresh = super().schedule()
        caller = _sys._getframe(1)
        probed = False
        for _ in range(6):  # the driver may sit a few frames up
            if caller is None:
                break
            if caller.f_locals.get("mutate") is True or (isinstance(caller.f_locals.get("workload"), dict)
                                                         and caller.f_locals["workload"].get("probe")):
                probed = True
                break
            caller = caller.f_back
        return fresh if probed else self._batch
