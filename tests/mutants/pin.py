"""Pin each mutant's expected findings: ``python -m tests.mutants.pin [NAME ...]``.

Writes tests/mutants/expected/<name>.json: per check the rule id and the
counterexample size, with white-box access and with black-box access only, plus
the white-box counterexamples (which conformance.workloads.corpus_build freezes into the
corpus). The runs leave the corpus's `counterexamples` family out (HONEST), so what is
pinned is what the other sources find on their own, not a replay of an earlier pin.
Rerun it only when a change to the suite is meant to change the findings.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conformance.catalog import BY_NAME, CATALOG
from conformance.reports.report import Report
from conformance.suite import run
from conformance.workloads.corpus import families_except

HERE = Path(__file__).parent
EXPECTED = HERE / "expected"
HONEST = families_except(["counterexamples"])  # every corpus family but the mutants' own pinned counterexamples


def findings(report: Report) -> dict[str, Any]:
    """check -> {rule, requests, steps, call} for every failing check."""
    return {cx.check: {"rule": cx.finding.rule, "call": cx.finding.call, **cx.size} for cx in report.counterexamples}


def pin(name: str) -> dict[str, Any]:
    path = f"conformance/mutants/{name}.py"
    white = run(path, "quick", families=HONEST)
    black = run(path, "quick", white_box=False, families=HONEST)
    return {"mutant": name, "symptom": BY_NAME[name].symptom, "profile": "quick",
            "white_box": findings(white), "black_box": findings(black),
            "counterexamples": {cx.check: cx.to_json() for cx in white.counterexamples}}


def main(names: list[str]) -> int:
    EXPECTED.mkdir(exist_ok=True)
    for name in names or [b.name for b in CATALOG]:
        data = pin(name)
        (EXPECTED / f"{name}.json").write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        print(name, {k: v["rule"] for k, v in data["white_box"].items()})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
