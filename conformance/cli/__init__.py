"""The ``schedcheck`` command: one entry point, one subcommand per job.

Each subcommand lives in its own module and is imported only when used, so a
broken optional part never stops the others.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# name -> (module with add_arguments(parser) and main(args) -> int, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "explain": ("spec.explain_cli", "print a card case or a workload/trace file as a step table with reasons"),
    "check": ("conformance.cli.check", "check an implementation against the spec and explain every failure"),
    "replay": ("conformance.cli.replay", "replay a workload or counterexample trace against an implementation"),
    "prove": ("spec.bounded.cli", "run the z3 proofs and the model checker; print the table"),
    "grade": ("conformance.grading.cli", "grade a folder of untrusted submissions in the sandbox, by a rubric"),
    "merge": ("conformance.grading.merge_cli", "merge graded shards: rebuild summary.csv and overview.md"),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="schedcheck", description="Executable spec and conformance suite "
                                     "for the P07 LLM-serving scheduler.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = {}
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name is None or not module_name.startswith(e.name):
                raise
            continue  # that part of schedcheck is not installed
        modules[name] = module
        module.add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return int(modules[args.command].main(args))


if __name__ == "__main__":
    sys.exit(main())
