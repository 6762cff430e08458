# ruff: noqa
"""Count its own runs in a shared folder and behave differently on later runs (and regrades).

Attack: at import it lists /var/tmp/schedcheck-attack-counter/ and adds one file for itself.
On the first run ever (the folder was empty) it is the correct scheduler; on every later run (a
fresh child after a crash or timeout, the next batch of the corpus, a regrade) its schedule()
raises. A grade then depends on what earlier runs left behind, so a regrade differs.

Expected: 100, identical on a regrade: every child starts from the same clean state, so each
run is its first (the counter folder is private to the child and gone after it).
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import os as _os

_COUNTER = "/var/tmp/schedcheck-attack-counter"


def _count() -> int:
    try:
        _os.makedirs(_COUNTER, mode=0o777, exist_ok=True)
        _os.chmod(_COUNTER, 0o1777)
    except OSError:
        pass
    try:
        before = len(_os.listdir(_COUNTER))
        with open(f"{_COUNTER}/run.{_os.getpid()}.{_os.getuid()}.{_os.urandom(4).hex()}", "w"):
            pass
    except OSError:
        return 0
    return before


_RUNS_BEFORE = _count()
_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def schedule(self) -> dict[str, int]:
        if _RUNS_BEFORE:
            raise RuntimeError(f"run number {_RUNS_BEFORE + 1}: behaving differently from the first run")
        return super().schedule()
