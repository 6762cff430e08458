"""``schedcheck view SOURCE [PATH] --html OUT``: a run as a page to step through in a browser.

SOURCE is a card case name, a golden .toml file, or a workload / trace /
counterexample / observed-trace .json file. With PATH (a submission, or
``impl``/``spec``), the submission runs the same workload and the page shows it
beside the spec, with every difference marked; an observed trace (a run recorded
elsewhere, docs/trace-format.md) is shown so without PATH.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from conformance.observed import Observed, ObservedError
from spec.errors import SpecError
from spec.golden import case_named, golden_cases, load_case
from spec.trace import Workload, workload_from_json

EXIT_USAGE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    names = ", ".join(c.name for c in golden_cases())
    parser.add_argument("source", help=f"a card case ({names}), a golden .toml file, or a workload, trace, "
                                       "counterexample or observed-trace .json file")
    parser.add_argument("path", nargs="?", help="a submission to run beside the spec (a .py file, impl or spec)")
    parser.add_argument("--adapter", metavar="FILE", help="an adapter for a submission with other names")
    parser.add_argument("--html", metavar="OUT", required=True, help="where to write the page")


def load_source(source: str) -> tuple[Workload, dict[str, Any] | None, Observed | None]:
    """The workload named by SOURCE, the finding a counterexample file carries, and the run an observed-trace file
    records (each None when the file has none)."""
    path = Path(source)
    if path.suffix == ".toml":
        return load_case(path).workload, None, None
    if path.suffix != ".json":
        return case_named(source).workload, None, None
    try:
        obj = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError) as e:
        raise SpecError(f"cannot read {source!r}: {str(e)[:200]}; give a workload, trace or counterexample JSON "
                        "file") from None
    finding = obj.get("finding") if isinstance(obj, dict) else None
    if isinstance(obj, dict) and obj.get("format") == "schedcheck/observed":
        try:
            observed = Observed.from_json(obj)
        except ObservedError as e:
            raise SpecError(f"{source}: {e}") from None
        return checked(workload_from_json(observed.workload), source), None, observed
    return checked(workload_from_json(obj), source), finding if isinstance(finding, dict) else None, None


def checked(workload: Workload, source: str) -> Workload:
    """`workload`, unless its spec run is too long to hold every step (a small file can ask for 10**9)."""
    from conformance.drivers import too_long

    why = too_long(workload, source)
    if why is not None:
        raise SpecError(why)
    return workload


def main(args: argparse.Namespace) -> int:
    from conformance.viewer.page import render_page

    try:
        workload, finding, observed = load_source(args.source)
    except (SpecError, KeyError) as e:
        print(f"schedcheck view: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.path:
        from conformance.adapters import LoadError, load_target
        from conformance.drivers import run_workload

        try:
            factory = load_target(args.path, args.adapter)
        except LoadError as e:
            print(f"schedcheck view: cannot load {args.path}: {e}", file=sys.stderr)
            return EXIT_USAGE
        observed = Observed.from_json(run_workload(workload, factory, white_box=True))
    try:
        page = render_page(workload, observed, title=Path(args.source).stem, finding=finding)
    except SpecError as e:  # a request that can never fit, an arrival of 0: the spec refuses to run it
        print(f"schedcheck view: {args.source}: {e}", file=sys.stderr)
        return EXIT_USAGE
    data = page.encode("utf-8", "replace")  # an id may hold a lone surrogate, which no UTF-8 file can
    Path(args.html).write_bytes(data)
    print(f"wrote {args.html} ({len(data) // 1024} KiB); open it in a browser")
    return 0
