"""Child-process entry points of the campaign: check one file with the suite, or diff two files.

Each runs in its own process so that a mutant that hangs, crashes or corrupts the interpreter
costs only itself. Usage:
    python -m conformance.selfcheck.worker check FILE --profile quick --json OUT
    python -m conformance.selfcheck.worker diff ORIGINAL MUTANT --runs 3000 --seed 7 --json OUT
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from pathlib import Path
from typing import Any

EXCLUDED_FAMILIES = ("counterexamples",)   # the suite's frozen corpus of known bugs: not fair against new bugs
CORPUS_FORMAT = "schedcheck/corpus"


def corpus_families() -> list[str] | None:
    """Name the suite's corpus families from its MANIFEST.json, or None if no manifest is found."""
    root = Path(__file__).resolve().parent.parent
    for manifest in sorted(root.rglob("MANIFEST.json")):
        try:
            data = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("format") == CORPUS_FORMAT and isinstance(data.get("families"), dict):
            return sorted(data["families"])
    return None


def check(target: str, profile: str) -> tuple[int, dict[str, Any]]:
    """Run the suite on `target` without the excluded corpus families; return (exit code, record)."""
    from conformance.suite import run

    started = time.perf_counter()
    families = corpus_families()
    record: dict[str, Any] = {"excluded_families": [], "families": families, "note": None}
    kwargs: dict[str, Any] = {}
    if "families" not in inspect.signature(run).parameters:
        record["note"] = "conformance.suite.run() has no 'families' parameter: the whole corpus was used"
    elif families is None:
        record["note"] = "no corpus MANIFEST.json found under conformance/: the whole corpus was used"
    else:
        kwargs["families"] = [f for f in families if f not in EXCLUDED_FAMILIES]
        record["excluded_families"] = [f for f in families if f in EXCLUDED_FAMILIES]
    try:
        report = run(target, profile, **kwargs)
    except Exception as exc:   # the suite could not load or run the file: not a verdict on it
        record.update(exit_code=2, error=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - started)
        return 2, record
    failed = sorted(name for name, result in report.checks.items() if result.status != "pass")
    record.update(exit_code=report.exit_code, verdict=report.verdict, failed_checks=failed,
                  vectors=report.vectors, seconds=time.perf_counter() - started)
    return int(report.exit_code), record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.selfcheck.worker")
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("target")
    c.add_argument("--profile", default="quick")
    c.add_argument("--json", required=True, type=Path)
    d = sub.add_parser("diff")
    d.add_argument("original", type=Path)
    d.add_argument("mutant", type=Path)
    d.add_argument("--runs", type=int, default=3000)
    d.add_argument("--seed", type=int, default=7)
    d.add_argument("--json", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.cmd == "check":
        code, record = check(args.target, args.profile)
    else:
        from conformance.selfcheck.differential import compare

        code, record = 0, compare(args.original, args.mutant, args.runs, args.seed)
    args.json.write_text(json.dumps(record, indent=1, sort_keys=True, default=str))
    return code


if __name__ == "__main__":
    sys.exit(main())
