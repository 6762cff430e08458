"""python -m bench [--quick] [--json PATH] [--only W1,W2,...]: measure floor, impl and spec; print and save.

python -m bench --check-time quick,default[,thorough] [--targets impl,reference,spec]: schedcheck check time
per profile, each run in a child process on one CPU (bench/checktime.py).

python -m bench --grade-throughput [--class course|catalog] [--copies N] [--jobs J]: submissions per minute
graded by `schedcheck grade`, against the same checks in process (bench/throughput.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench import throughput
from bench.checktime import TARGETS, render_check_times, run_check_times
from bench.report import render
from bench.suite import FULL, QUICK, run_suite
from conformance.profiles import PROFILES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats and shorter windows (under 2 minutes)")
    parser.add_argument("--json", metavar="PATH", help="also write the report as JSON to PATH")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated workloads, e.g. W1,F (F means every F<n>)")
    parser.add_argument("--check-time", metavar="PROFILES", help="instead: time `schedcheck check` per profile, "
                        "e.g. quick,default,thorough")
    parser.add_argument("--targets", metavar="NAMES", default="impl,reference",
                        help=f"with --check-time: targets among {','.join(TARGETS)} (default impl,reference)")
    parser.add_argument("--grade-throughput", action="store_true",
                        help="instead: submissions graded per minute by `schedcheck grade` (bench/throughput.py)")
    parser.add_argument("--class", dest="which", choices=throughput.CLASSES, default="course",
                        help="with --grade-throughput: the class to grade (default course)")
    parser.add_argument("--copies", type=int, default=2, help="with --grade-throughput: copies of the class")
    parser.add_argument("--jobs", type=int, default=2, help="with --grade-throughput: submissions graded at once")
    args = parser.parse_args(argv)
    if args.grade_throughput:
        report = throughput.measure(args.copies, args.jobs, args.which)
        print(throughput.render(report))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        return 0
    if args.check_time:
        unknown = sorted(set(args.check_time.split(",")) - set(PROFILES))
        if unknown:
            print(f"--check-time: no profile named {', '.join(unknown)}; known: {', '.join(PROFILES)}", file=sys.stderr)
            return 2
        report = run_check_times(args.check_time.split(","), args.targets.split(","))
        print(render_check_times(report))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        return 0
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
