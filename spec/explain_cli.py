"""``schedcheck explain [CASE | FILE]``: show what the model does, step by step, and why."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from spec.errors import SpecError
from spec.explain import render_trace
from spec.golden import case_named, golden_cases, load_case
from spec.trace import load_workload, run_workload, trace_to_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    names = ", ".join(c.name for c in golden_cases())
    parser.add_argument("case", nargs="?", default="self_preemption",
                        help=f"a card case ({names}), a golden .toml file or a workload/trace .json file "
                             "(default: self_preemption)")
    parser.add_argument("--json", metavar="OUT", help="also write the trace as JSON (docs/trace-format.md)")
    parser.add_argument("--no-events", action="store_true", help="print the table without the reasons")


def main(args: argparse.Namespace) -> int:
    try:
        path = Path(args.case)
        if path.suffix == ".toml":
            workload = load_case(path).workload
        elif path.suffix == ".json":
            workload = load_workload(path)
        else:
            workload = case_named(args.case).workload
        trace = run_workload(workload)
    except SpecError as e:
        print(f"schedcheck explain: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    print(render_trace(trace, events=not args.no_events))
    if args.json:
        Path(args.json).write_text(json.dumps(trace_to_json(trace), indent=1) + "\n")
    return 0
