"""``schedcheck replay TRACE PATH`` (or ``--wire CMD``): rerun one workload or trace against an implementation.

Runs every per-workload check (differential, invariants, equivalence, liveness,
hygiene) on the trace's workload; exit 0 when all pass, 1 on a finding, 2 when the
trace or the implementation cannot be loaded. A trace with a "prelude" (the earlier
or interleaved instances a finding needs) has it run first, so a history-dependent
counterexample reproduces in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from conformance.adapters import LoadError, load_target
from conformance.checks import history
from conformance.checks.history import parse_prelude
from conformance.checks.workload import probe_white_box, replay
from conformance.cli.check import write_html
from conformance.cli.policy import add_policy_argument
from conformance.drivers import too_long
from conformance.reports.report import EXIT_FAIL, EXIT_PASS, EXIT_USAGE, Counterexample
from conformance.reports.traces import render
from conformance.wire import cli as wire
from spec.errors import SpecError
from spec.trace import load_workload, with_policy


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a workload or trace JSON file (e.g. from --trace-dir)")
    parser.add_argument("path", metavar="PATH", nargs="?", help="a submission file, a dotted module name, 'impl' "
                        "or 'spec'; or give --wire CMD instead")
    parser.add_argument("--adapter", metavar="ADAPTER",
                        help="a .py file or a dotted module name defining open_target(target, **options); options "
                             "as ADAPTER?key=value&... (docs/adapters.md)")
    wire.add_arguments(parser)
    add_policy_argument(parser, default=None, otherwise="the policy the trace records")
    parser.add_argument("--black-box", action="store_true", help="use no white-box attribute")
    parser.add_argument("--html", metavar="OUT", help="write the replayed run as a page to step through in a browser")


def main(args: argparse.Namespace) -> int:
    try:
        target, adapter, shown_as = wire.target_from_args(args)
    except ValueError as e:
        print(f"schedcheck replay: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        workload = load_workload(args.trace)
        if args.policy is not None:
            workload = with_policy(workload, args.policy)
        prelude = json.loads(Path(args.trace).read_text()).get("prelude")
        parse_prelude(prelude)
        times = history.repeats(prelude)
        history.group_of(prelude)
        why = too_long(workload, args.trace)
        if why is not None:
            raise ValueError(why)
    except (SpecError, KeyError, TypeError, AttributeError, ValueError) as e:
        print(f"schedcheck: {args.trace}: {e!r}; pass a workload or a trace written by schedcheck check "
              "--trace-dir", file=sys.stderr)
        return EXIT_USAGE
    try:
        factory = load_target(target, adapter)
    except LoadError as e:
        print(f"schedcheck: cannot load {shown_as}: {e}", file=sys.stderr)
        return EXIT_USAGE
    spare = load_target(target, adapter) if adapter is None and target.endswith(".py") else factory
    white_box = not args.black_box and probe_white_box(spare).on  # on a copy of its own, as check probes
    judged, tried = replay(workload, prelude, factory, white_box)
    found = judged.findings
    failures = [(check, f) for check, f in found.items() if f is not None]
    print(f"policy {workload.config.policy}" + ("" if args.policy else " (as the trace records)"))
    if times > 1:
        print(f"run {tried} of up to {times} in this process, as the trace's prelude asks"
              + (": the first that failed" if failures else ": none failed"))
    for check, f in found.items():
        print(f"{check:<13} {'FAIL' if f else 'pass'}" + (f"  [{f.rule}] {f.message}" if f else ""))
    if args.html:
        first = failures[0][1] if failures else None
        page = write_html(args.html, workload, judged.shown(first) if first else judged.observed,
                          None if first is None else first.to_json(), f"{args.trace} on {shown_as}")
        print(f"wrote {page}")
    if not failures:
        print(f"\nPASS: {shown_as} follows the spec on {args.trace} under policy {workload.config.policy}")
        return EXIT_PASS
    check, f = failures[0]
    print()
    print(render(Counterexample(check, f, workload, args.trace), judged.shown(f)))
    return EXIT_FAIL
