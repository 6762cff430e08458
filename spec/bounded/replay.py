"""Replay a solver counterexample on spec/rules.py and say whether the violation shows there.

This ties every solver answer back to the executable spec: a counterexample the
spec does not reproduce means the encoding, not the spec, is wrong.
"""

from __future__ import annotations

import types

import spec.rules
from spec.bounded.execute import violations
from spec.trace import workload_from_json


def confirm(claim: str, workload: dict[str, object], steps: int, rules: types.ModuleType = spec.rules) -> str:
    """'reproduced', 'not reproduced', or 'not replayable' (unwind is about the encoding's loops)."""
    if claim == "unwind":
        return "not replayable"
    found = violations(rules, workload_from_json(workload), steps)
    return "reproduced" if found.get(claim) else "not reproduced"
