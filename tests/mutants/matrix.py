"""The kill matrix of docs/conformance.md, made from the pinned findings: ``python -m tests.mutants.matrix``.

A cell is the rule id of the check's shrunk counterexample with white-box access; `†` marks a
black-box check that finds the mutant only with white-box access, `·` a check that does not find it.
tests/mutants/test_mutants.py fails when the table in the docs is not this one.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from conformance.catalog import CATALOG
from tests.mutants.pin import EXPECTED

CHECKS = ("golden", "differential", "invariants", "equivalence", "liveness", "hygiene", "stateful")
HEADER = "| mutant | " + " | ".join(CHECKS) + " | black box alone | smallest (requests, steps) |\n" + \
    "|---" * (len(CHECKS) + 3) + "|\n"


def row(pinned: dict[str, Any]) -> str:
    white, black = pinned["white_box"], pinned["black_box"]
    cells = [white[c]["rule"] + ("" if c in black or c == "invariants" else "†") if c in white else "·"
             for c in CHECKS]  # invariants is white box by nature: no mark
    smallest = min((f["requests"], f["steps"]) for f in white.values())
    alone = ", ".join(sorted(black)) or "none"
    return f"| {pinned['mutant']} | " + " | ".join(cells) + f" | {alone} | {smallest} |\n"


def table() -> str:
    return HEADER + "".join(row(json.loads((EXPECTED / f"{b.name}.json").read_text())) for b in CATALOG)


if __name__ == "__main__":
    sys.stdout.write(table())
