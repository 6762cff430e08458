"""The state machine's verdict on one of its runs, read off the run's observed trace: one rule for both commands.

The lockstep machine (conformance/checks/machine.py) fails a run when a call differs from the spec's or fails, or
when a state invariant (I1, I3, I6) breaks after a step, within the steps it took. `grade` runs each of the
machine's runs as a case and `check` judges each one whole when lockstep found nothing; both ask this module, so
a run fails the stateful check in one exactly when it fails it in the other. The finding is the first of
differential, invariants and hygiene on the run (the one `check` reports for the run its machine fails). A step
property (I2, I4, I5), or a white-box field compared with the spec's (a num_preemptions that differs), is no
failure of the machine.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from conformance.checks import checkers, whitebox
from conformance.checks.checkers import Finding
from spec.trace import Workload


def machine_finding(workload: Workload, observed: dict[str, Any], steps: int) -> Finding | None:
    """The stateful check's finding on a run of the machine that took `steps` steps, or None."""
    found = [f[0] for judge in (checkers.differential, whitebox.invariants, checkers.hygiene)
             if (f := judge(workload, observed))]
    calls = any(f.step <= steps for f in found if f.check != "invariants")
    if not calls and not state_broken(workload, observed, steps):
        return None
    return replace(found[0], check="stateful")


def state_broken(workload: Workload, observed: dict[str, Any], steps: int) -> bool:
    """Whether the state invariants break, or the state cannot be read, after one of the first `steps` steps."""
    bad = observed.get("white_box_error")
    if bad is not None and bad["step"] <= steps:
        return True
    requests = {r.seq_id: (r.prompt_len, r.max_tokens) for r in workload.requests}
    for got in observed["steps"][:steps]:
        snap = got.get("after_update")
        if snap is None:
            continue
        try:
            if whitebox.state_violations(workload.config, requests, snap):
                return True
        except (KeyError, TypeError, ValueError):  # inconsistent: the machine fails reading it too
            return True
    return False
