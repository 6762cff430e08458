"""``schedcheck check PATH`` (or ``--wire CMD``): check an implementation against the spec and explain every failure.

Exit codes: 0 conformant (PASS), 1 not conformant (FAIL), 2 usage error or the
submission cannot be loaded, 3 the suite itself failed (ERROR, with its traceback),
4 nothing failed but a check could not run (UNKNOWN). The summary table, the
diagnosis and the first counterexample go to the terminal; ``--json`` writes the
report (byte-identical across runs), ``--trace-dir`` writes each counterexample as
a replayable JSON trace and a standalone pytest file.
``--wire CMD`` checks a program in any language through conformance/wire/ (the adapter; the transport is connection.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from conformance.adapters import LoadError
from conformance.checks.diagnosis import diagnosis_lines
from conformance.cli.policy import add_policy_argument, rerun_flags
from conformance.observed import Observed
from conformance.profiles import PROFILES
from conformance.reports.report import EXIT_FAIL, EXIT_USAGE, Report
from conformance.reports.traces import render, shown_run, write_all
from conformance.starter import unimplemented_lines
from conformance.suite import run
from conformance.wire import cli as wire
from conformance.workloads.corpus import families_except, family_arg
from spec.model import DEFAULT_POLICY
from spec.trace import RULES_VERSION, Workload


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", nargs="?", help="a submission file (mine/p07_scheduler.py), a "
                        "dotted module name, 'impl' or 'spec'; or give --wire CMD instead")
    parser.add_argument("--adapter", metavar="ADAPTER",
                        help="a .py file or a dotted module name defining open_target(target, **options); options "
                             "as ADAPTER?key=value&... (docs/adapters.md)")
    wire.add_arguments(parser)
    add_policy_argument(parser, default=None, otherwise="the policy the adapter reports for its engine, else p07")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="quick",
                        help="how hard to look: quick (< 10 s on a Python file), default (< 30 s), thorough "
                             "(minutes); an engine's adapter takes longer (docs/engines.md)")
    parser.add_argument("--json", metavar="OUT", help="write the JSON report to OUT")
    parser.add_argument("--trace-dir", metavar="DIR", help="write counterexamples (JSON trace + pytest file) to DIR")
    parser.add_argument("--black-box", action="store_true", help="use no white-box attribute (skips invariants)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--html", metavar="OUT", help="write the first counterexample as a page to step through "
                                                      "in a browser (docs/viewer.md)")
    parser.add_argument("--exclude-family", metavar="FAMILY", action="append", type=family_arg, default=[],
                        help="leave this corpus family out (repeatable), e.g. counterexamples: the mutants' own "
                        "pinned counterexamples, to measure what the other sources find on their own")


class _Progress:
    """One overwritten status line on a terminal, nothing otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.start = time.perf_counter()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if self.enabled:
            of = f"/{total}" if total else ""
            sys.stderr.write(f"\r  {time.perf_counter() - self.start:6.1f}s  {stage} {done}{of}        ")
            sys.stderr.flush()

    def clear(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 70 + "\r")


def main(args: argparse.Namespace) -> int:
    try:
        target, adapter, shown_as = wire.target_from_args(args)
    except ValueError as e:
        print(f"schedcheck check: {e}", file=sys.stderr)
        return EXIT_USAGE
    progress = _Progress(not args.quiet)
    try:
        report = run(target, args.profile, adapter=adapter, white_box=not args.black_box, progress=progress,
                     families=families_except(args.exclude_family), policy=args.policy)
    except LoadError as e:
        progress.clear()
        print(f"schedcheck: cannot load {shown_as}: {e}", file=sys.stderr)
        return EXIT_USAGE
    progress.clear()
    if report.unimplemented:  # a starter file: which methods to write says more than counterexamples about them
        print(f"schedcheck check {shown_as}: not conformant yet: {len(report.unimplemented)} of its methods are "
              "still to write")
        print("\n".join(unimplemented_lines(list(report.unimplemented))))
        return EXIT_FAIL
    if report.error is not None:
        print(f"schedcheck check {shown_as}: ERROR: the suite itself failed, so nothing is known about the "
              f"submission; please report this traceback:\n{report.error}", file=sys.stderr)
    t = report.timings
    print(f"schedcheck check {shown_as}  profile={args.profile}  rules={RULES_VERSION}  policy={report.policy}  "
          f"{report.vectors} corpus vectors  {t['total']:.1f} s")
    print(report.summary())
    if report.diagnosis is not None:
        print()
        print("\n".join(diagnosis_lines(report.diagnosis)))
    cxs = report.counterexamples
    if cxs:
        print()
        shown = next((c for c in cxs if c.check == "differential"), cxs[0])  # the step-by-step view says most
        observed = shown_run(shown, target, adapter, report.white_box)
        print(render(shown, observed))
        if args.html:
            print(f"wrote {write_html(args.html, shown.workload, observed, shown.finding.to_json(), shown_as)}")
        if t["first_finding"] is not None:
            print(f"      time to first finding: {t['first_finding']:.2f} s")
    if args.trace_dir:
        out = Path(args.trace_dir)
        flags = rerun_flags(args.policy)
        for i, cx in enumerate(cxs, start=1):
            for p in write_all(cx, i, out, target, adapter):
                print(f"wrote {p}" + (f"   (rerun: schedcheck replay {p} {shown_as}{flags})" if p.suffix == ".json"
                                      else f"   (rerun: python -m pytest {p})"))
    if args.json:
        Path(args.json).write_text(report.dumps())
    print("\n" + verdict_line(report, args.profile))
    return report.exit_code


def write_html(out: str, workload: Workload, observed: dict[str, Any] | None, finding: dict[str, Any] | None,
               title: str) -> str:
    """Write the viewer page of `workload`, with the submission's run (`observed`) beside the spec's."""
    from conformance.viewer.page import render_page

    run = Observed.from_json(observed) if observed is not None else None
    Path(out).write_bytes(render_page(workload, run, title=title, finding=finding).encode("utf-8", "replace"))
    return out


def verdict_line(report: Report, profile: str) -> str:
    """The last line: the verdict and what it rests on."""
    failed = sum(c.status == "fail" for c in report.checks.values())
    unknown = [name for name, c in report.checks.items() if c.status == "unknown"]
    if report.verdict == "ERROR":
        return f"ERROR: the suite failed (traceback above); {failed} of {len(report.checks)} checks had failed by then"
    if report.verdict == "FAIL":
        return f"FAIL: {failed} of {len(report.checks)} checks failed"
    if report.verdict == "UNKNOWN":
        return f"UNKNOWN: nothing failed, but {', '.join(unknown)} could not run to a verdict (see the notes)"
    policy = "" if report.policy == DEFAULT_POLICY else f" and policy {report.policy}"
    return f"PASS: conformant under profile {profile}{policy}"
