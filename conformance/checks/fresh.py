"""`check`'s confirmation of a failure on a freshly loaded copy of the submission (history.after_history says why).

A check's failure counts once a copy of the target file executed anew (fresh module state; the white-box
probe runs on a copy of its own) fails the same check on the same run. A failure that the fresh copy
does not reproduce needs earlier runs in the process: hygiene's [H.history]. The fresh copy then carries
on in place of the old one, whose state is known to be spoilt. Only a ``.py`` target can be loaded anew;
a module's or an adapter's failures stand as found (their state cannot be reset from here).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.adapters import Factory, load_target
from conformance.checks.checkers import Finding
from conformance.checks.diagnosis import Evidence, reproduce
from conformance.checks.history import CONFIRM_MAX, group_finding
from conformance.limits import HangLimit
from conformance.workloads.reach import group_lanes
from spec.trace import Workload

UNCONFIRMED = ("H.timeout", "H.history")  # a hang is not rerun (it would cost its whole time limit again): it stands


@dataclass
class Fresh:
    """Fresh copies of one target, and how many failures of each check they did not reproduce."""

    target: str
    white_box: bool
    reloadable: bool
    history: dict[str, int] = field(default_factory=dict)  # check -> failures put down to process history
    factory: Factory | None = None  # the last fresh copy: it replaces the spoilt one

    @classmethod
    def of(cls, target: str, adapter: str | None, white_box: bool) -> Fresh:
        return cls(target, white_box, adapter is None and target.endswith(".py"))

    def copy(self) -> Factory | None:
        """Another freshly loaded copy (None when the target cannot be loaded anew): the white-box probe runs on
        one of its own, so its instance is part of no judged run's history."""
        return load_target(self.target) if self.reloadable else None

    def settled(self, check: str) -> bool:
        """True once CONFIRM_MAX failures of `check` all passed on a fresh copy: its failures are history's."""
        return self.history.get(check, 0) >= CONFIRM_MAX

    def confirm(self, check: str, workload: Workload, finding: Finding, source: str) -> Finding | None:
        """The finding a fresh copy gives on the same run (it stands), or None when the fresh copy passes (history)."""
        if not self.reloadable or finding.rule in UNCONFIRMED or self.settled(check):
            return finding
        fresh = load_target(self.target)
        lanes = group_lanes(source, workload.config.policy)
        try:
            again = group_finding(list(lanes), fresh)[0] if lanes else \
                reproduce(fresh, Evidence(check, workload, finding, source), self.white_box)
        except HangLimit:
            return finding  # the fresh copy hangs where the old one failed: inconclusive, so it stands
        if again is None:
            self.history[check] = self.history.get(check, 0) + 1
            self.factory = fresh
        return again
