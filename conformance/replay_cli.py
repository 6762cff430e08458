"""``schedcheck replay TRACE PATH``: rerun one workload or counterexample trace against an implementation.

Runs every per-workload check (differential, invariants, equivalence, liveness,
hygiene) on the trace's workload; exit 0 when all pass, 1 on a finding, 2 when the
trace or the implementation cannot be loaded.
"""

from __future__ import annotations

import argparse
import sys

from conformance.adapters import LoadError, load_target
from conformance.report import EXIT_FAIL, EXIT_PASS, EXIT_USAGE, Counterexample
from conformance.runner import check_workload
from conformance.suite import _probe_white_box
from conformance.traces import render
from spec.errors import SpecError
from spec.trace import load_workload


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a workload or trace JSON file (e.g. from --trace-dir)")
    parser.add_argument("path", metavar="PATH", help="a submission file, a dotted module name, 'impl' or 'spec'")
    parser.add_argument("--adapter", metavar="FILE", help="a custom adapter file defining open_target(target)")
    parser.add_argument("--black-box", action="store_true", help="use no white-box attribute")


def main(args: argparse.Namespace) -> int:
    try:
        workload = load_workload(args.trace)
    except SpecError as e:
        print(f"schedcheck: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        factory = load_target(args.path, args.adapter)
    except LoadError as e:
        print(f"schedcheck: cannot load {args.path!r}: {e}", file=sys.stderr)
        return EXIT_USAGE
    white_box = not args.black_box and _probe_white_box(factory) is None
    found = check_workload(workload, factory, white_box)
    failures = [(check, f) for check, f in found.items() if f is not None]
    for check, f in found.items():
        print(f"{check:<13} {'FAIL' if f else 'pass'}" + (f"  [{f.rule}] {f.message}" if f else ""))
    if not failures:
        print(f"\nPASS: {args.path} follows the spec on {args.trace}")
        return EXIT_PASS
    check, f = failures[0]
    print()
    print(render(Counterexample(check, f, workload, args.trace), factory, white_box))
    return EXIT_FAIL
