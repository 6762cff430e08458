"""python -m bench [--quick] [--json PATH] [--only W1,W2,...]: measure floor, impl and spec; print and save."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.report import render
from bench.suite import FULL, QUICK, run_suite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats and shorter windows (under 2 minutes)")
    parser.add_argument("--json", metavar="PATH", help="also write the report as JSON to PATH")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated workloads, e.g. W1,F (F means every F<n>)")
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    report = run_suite(QUICK if args.quick else FULL, only)
    if not report["results"]:
        print(f"no workload matches --only {args.only}; known: W1, W2, W3, F", file=sys.stderr)
        return 2
    print(render(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
