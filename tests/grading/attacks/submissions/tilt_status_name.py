# ruff: noqa
"""Status names that inject HTML and table cells into the counterexample step table.

Attack: the white-box snapshots send each sequence's status.name (any str up to 64 characters).
This is the correct scheduler, except that its statuses are an enum whose member names are
`RUNNING|**100/100**<img src=x onerror=alert(2)>` and friends, so the white-box checks fail
and the first counterexample table, built from those names, shows them.

Expected: the white-box items fail (score below 100); the names appear only as inert text: the
raw `<img src=x onerror=alert(2)>` never appears in any output, and no table cell is split.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import sys as _sys

_NAMES = {_WAITING: "WAITING|x|<img src=x onerror=alert(2)>", _RUNNING: "RUNNING|**100/100**<img src=x onerror=alert(2)>",
          _FINISHED: "FINISHED</td></tr><img src=x onerror=alert(2)>"}


class _Shown:
    """What a reader outside this module sees as a status: only a hostile .name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class _Sequence(Sequence):
    __slots__ = ()

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        if name == "status" and _sys._getframe(1).f_globals is not globals():
            return _Shown(_NAMES[value])
        return value


Sequence = _Sequence  # noqa: F811 - the driver builds these
