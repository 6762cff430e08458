"""What the end of a run showed about the values a submission returned: the retention observation.

A run's driver keeps every dict schedule() and every list update() returned and reads them again when
the run ends (conformance/sandbox/keep.py, the same code in `check`'s adapter and in the sandbox
child). What it finds is reported as plain data, read into ``Kept`` by conformance.sandbox.protocol
``kept`` on both sides, and judged by conformance.checks.history ``judge_kept``: so `check` and
`grade` judge one observation with one function, and find the same H.retained and H.aliased.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("aliased", "changed", "replaced", "field")  # what happened to a returned value after it was returned


@dataclass(frozen=True, slots=True)
class Kept:
    """One thing that happened to a value schedule() or update() returned, seen at the end of the run.

    ``then`` and ``now`` are shown as plain data: a returned dict as its [key, value] pairs, a list as the
    seq_ids of its Sequences, a field as its value; another object as its type name; long lists end "...".
    """

    step: int  # the step of the call that returned the value
    call: str  # "schedule" or "update"
    kind: str  # aliased: the same object as an earlier call's result; changed: its contents changed;
    #            replaced: update() returned a Sequence that is not the one passed to add();
    #            field: a finished Sequence that update() returned changed a field later
    then: Any = None  # changed, field: the contents (or the field) when the call returned
    now: Any = None  # changed, field: ... at the end of the run
    earlier: tuple[int, str] | None = None  # aliased: the step and call that returned the object first
    seq: Any = None  # replaced, field: the Sequence's seq_id
    field: str | None = None  # field: which field changed
