"""python -m bench [--quick] [--json PATH] [--only W1,W2,...]: measure floor, impl and spec; print and save.

python -m bench --check-time quick,default[,thorough] [--targets impl,reference,spec]: schedcheck check time
per profile, each run in a child process on one CPU (bench/checktime.py).

python -m bench --grade-throughput [--class course|catalog] [--copies N] [--jobs J]: submissions per minute
graded by `schedcheck grade`, against the same checks in process (bench/throughput.py).

python -m bench --test-time: the README's test commands, their counts and wall times (bench/testtime.py).

Each measurement is also stored under bench/measured/ (a quick run's, a grade's, the check times', the
tests'; the full run's where --json says, bench/results.json in the README), and the docs quote it from
there: python -m bench --figures rewrites every figure of README.md and docs/ from the stored
measurements, and python -m bench --check-figures only says which are stale (bench/figures.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench import figures, testtime, throughput
from bench.checktime import TARGETS, merged_check_times, render_check_times, run_check_times
from bench.report import render
from bench.suite import FULL, QUICK, run_suite
from conformance.profiles import PROFILES


def stored_check_times() -> list[dict[str, Any]]:
    """The rows of check time stored so far (the docs' table), for a run to update."""
    path = figures.ROOT / figures.SOURCES["check_time"].path
    rows: list[dict[str, Any]] = json.loads(path.read_text())["rows"] if path.exists() else []
    return rows


def show_figures(check_only: bool) -> int:
    """Rewrite (or only check) the docs' figures from the stored measurements; 1 if anything is left to do."""
    if check_only:
        problems = figures.check() + figures.unregistered()
        print("every figure is as stored" if not problems else f"{len(problems)} figures to see to:")
    else:
        changes, problems = figures.rewrite()
        for c in changes:
            print(f"{c.doc}: {' '.join(c.old.split())} -> {c.new} ({c.where})")
        problems += figures.unregistered()
        print(f"{len(changes)} figures rewritten" if changes else "every figure is as stored")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
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
    parser.add_argument("--test-time", action="store_true",
                        help="instead: run the README's test commands and store their counts and times")
    parser.add_argument("--figures", action="store_true",
                        help="instead: rewrite the figures of README.md and docs/ from the stored measurements")
    parser.add_argument("--check-figures", action="store_true",
                        help="instead: say which figures of README.md and docs/ differ from the stored measurements")
    args = parser.parse_args(argv)
    if args.figures or args.check_figures:
        return show_figures(check_only=args.check_figures)
    if args.test_time:
        stamp = figures.stamp()
        report = testtime.measure()
        print(testtime.render(report))
        print(f"stored in {figures.store(figures.SOURCES['tests'].path, {**report, **stamp})}")
        return 0
    if args.grade_throughput:
        stamp = figures.stamp()
        report = throughput.measure(args.copies, args.jobs, args.which)
        print(throughput.render(report))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        command = (f"python -m bench --grade-throughput --class {args.which} --copies {args.copies} "
                   f"--jobs {args.jobs}")
        stored = figures.store(f"{figures.MEASURED}/throughput-{args.which}.json",
                               {**report, **stamp, "command": command})
        print(f"stored in {stored}")
        return 0
    if args.check_time:
        unknown = sorted(set(args.check_time.split(",")) - set(PROFILES))
        if unknown:
            print(f"--check-time: no profile named {', '.join(unknown)}; known: {', '.join(PROFILES)}", file=sys.stderr)
            return 2
        stamp = figures.stamp()
        report = run_check_times(args.check_time.split(","), args.targets.split(","))
        print(render_check_times(report))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        merged = merged_check_times(stored_check_times(), report, stamp)
        print(f"stored in {figures.store(figures.SOURCES['check_time'].path, merged)}")
        return 0
    only = set(args.only.split(",")) if args.only else None
    stamp = figures.stamp()
    report = run_suite(QUICK if args.quick else FULL, only)
    if not report["results"]:
        print(f"no workload matches --only {args.only}; known: W1, W2, W3, F", file=sys.stderr)
        return 2
    report = {**report, **stamp}
    print(render(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")
    if args.quick and only is None:  # the docs quote how long the quick run takes
        stored = figures.store(figures.SOURCES["bench_quick"].path,
                               {"format": "schedcheck/bench-quick", "version": 1, **stamp,
                                "command": "python -m bench --quick", "seconds": report["seconds"]})
        print(f"stored its time in {stored}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
