"""The report of a conformance run: per-check results, the feature matrix, counterexamples, verdict.

``Report.to_json`` is a pure function of (target name, profile, corpus, submission):
no timings, no absolute paths, keys sorted, so two runs give byte-identical files.
Timings live in ``Report.timings`` and are printed on the terminal only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.checks.checkers import CHECKS, Finding
from conformance.profiles import Profile
from spec.model import DEFAULT_POLICY, Policy
from spec.trace import RULES_VERSION, Workload, workload_to_json

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_ERROR, EXIT_UNKNOWN = 0, 1, 2, 3, 4
EXIT_CODES = {"PASS": EXIT_PASS, "FAIL": EXIT_FAIL, "ERROR": EXIT_ERROR, "UNKNOWN": EXIT_UNKNOWN}
BLACK_BOX = {"golden": True, "differential": True, "invariants": False, "equivalence": True, "liveness": True,
             "hygiene": True, "stateful": True}  # whether a check needs no white-box access


@dataclass
class Counterexample:
    """The shrunk failing workload of one check, and where it was first found."""

    check: str
    finding: Finding
    workload: Workload
    source: str  # golden/<case>, corpus/<family>/<name>, exhaustive, edge-biased, stateful machine
    prelude: list[dict[str, Any]] | None = None  # earlier/other instances the finding needs (checks.history)

    @property
    def size(self) -> dict[str, int]:
        return {"requests": len(self.workload.requests), "steps": self.finding.step}

    def to_json(self) -> dict[str, Any]:
        return {**self.finding.to_json(), "size": self.size, "source": self.source,
                "workload": workload_to_json(self.workload),
                **({"prelude": self.prelude} if self.prelude is not None else {})}


@dataclass
class CheckResult:
    status: str = "pending"  # pass, fail, skipped (asked not to run), unknown (could not run)
    runs: int = 0  # workloads (or machine runs) judged
    failed: int = 0  # of which failed, before shrinking
    counterexample: Counterexample | None = None

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "runs": self.runs, "failed": self.failed,
                "counterexample": None if self.counterexample is None else self.counterexample.to_json()}


def display_name(target: str) -> str:
    """The target as given, without an absolute prefix (reports must not depend on the checkout path)."""
    p = Path(target)
    if p.is_absolute():
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            return p.name
    return target


@dataclass
class Report:
    target: str
    adapter: str | None
    profile: Profile
    white_box: bool
    checks: dict[str, CheckResult]
    features: dict[str, dict[str, int]]
    notes: list[str]
    vectors: int
    timings: dict[str, float | None] = field(default_factory=dict)  # seconds; terminal only
    error: str | None = None  # the suite's own traceback: the run is incomplete and proves nothing
    diagnosis: dict[str, Any] | None = None  # conformance.checks.diagnosis.Diagnosis.to_json(), when FAIL
    policy: Policy = DEFAULT_POLICY  # the rules every workload was judged under (spec/model.py POLICIES)
    unimplemented: tuple[str, ...] = ()  # on a FAIL, the calls still raising NotImplementedError (a starter file)

    @property
    def verdict(self) -> str:
        """ERROR (the suite failed), FAIL (a finding), UNKNOWN (a check could not run), else PASS."""
        if self.error is not None:
            return "ERROR"
        if any(c.status == "fail" for c in self.checks.values()):
            return "FAIL"
        return "UNKNOWN" if any(c.status == "unknown" for c in self.checks.values()) else "PASS"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    @property
    def counterexamples(self) -> list[Counterexample]:
        return [c.counterexample for c in self.checks.values() if c.counterexample is not None]

    def to_json(self) -> dict[str, Any]:
        return {"format": "schedcheck/report", "version": 1, "rules": RULES_VERSION,
                "target": display_name(self.target),
                "adapter": None if self.adapter is None else display_name(self.adapter),
                "profile": self.profile.to_json(), "policy": str(self.policy), "white_box": self.white_box,
                "verdict": self.verdict,
                "checks": {name: self.checks[name].to_json() for name in CHECKS},
                "features": self.features, "corpus_vectors": self.vectors, "notes": self.notes,
                **({"error": self.error} if self.error is not None else {}),
                **({"diagnosis": self.diagnosis} if self.diagnosis is not None else {})}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def summary(self) -> str:
        """The per-check table and the feature matrix, for the terminal."""
        lines = [f"{'check':<13} {'status':<8} {'runs':>6} {'failed':>7}  {'box':<6} first finding"]
        for name in CHECKS:
            c = self.checks[name]
            first = ""
            if c.counterexample is not None:
                f = c.counterexample.finding
                first = f"[{f.rule}] step {f.step}, {c.counterexample.size['requests']} requests"
            box = "black" if BLACK_BOX[name] else "white" if self.white_box else "batch"
            lines.append(f"{name:<13} {c.status.upper():<8} {c.runs:>6} {c.failed:>7}  {box:<6} {first}")
        if self.features:
            failing = {k: v for k, v in sorted(self.features.items()) if v["fail"]}
            passing = sorted(k for k, v in self.features.items() if not v["fail"])
            lines.append("")
            lines.append(f"features: {len(passing)} pass" + (f": {', '.join(passing)}" if passing else ""))
            causes = (self.diagnosis or {}).get("causes") or []
            if failing and causes:  # one line per cause below, not one per feature it touches
                lines.append(f"features: {len(failing)} fail, from {len(causes)} cause{'s' * (len(causes) != 1)} "
                             "(see causes below; the JSON report has the per-feature counts)")
            else:
                for tag, row in failing.items():
                    lines.append(f"  FAIL {tag:<28} {row['fail']} of {row['pass'] + row['fail']} corpus vectors "
                                 "fail")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)
