"""The ``schedcheck`` command: one entry point, one subcommand per job.

Each subcommand lives in its own module and is imported only when it is the one
asked for, so a part whose dependencies are missing (z3 for ``prove``, say)
never stops the others.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

# name -> (module with add_arguments(parser) and main(args) -> int, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "explain": ("spec.explain_cli", "print a card case or a workload/trace file as a step table with reasons"),
    "check": ("conformance.cli.check", "check an implementation against the spec and explain every failure"),
    "replay": ("conformance.cli.replay", "replay a workload or counterexample trace against an implementation"),
    "view": ("conformance.viewer.cli", "write a run as a self-contained HTML page to step through in a browser"),
    "course-init": ("conformance.course", "write the course repository's ./check.sh p07 and a starter "
                    "mine/p07_scheduler.py"),
    "api": ("conformance.cli.docs", "print the interface a submission implements (docs/api.md)"),
    "rules": ("conformance.cli.docs", "print the scheduling rules, with the rule ids findings name (docs/rules.md)"),
    "docs": ("conformance.cli.docs", "print one of schedcheck's pages (grading, sandbox, wire-protocol, ...)"),
    "prove": ("spec.bounded.cli", "run the z3 proofs and the model checker; print the table"),
    "grade": ("conformance.grading.cli", "grade a folder of untrusted submissions in the sandbox, by a rubric"),
    "merge": ("conformance.grading.cli", "merge graded shards: rebuild summary.csv and overview.md"),
}

# import name -> the distribution that provides it, for the install hint
DISTRIBUTIONS = {"z3": "z3-solver", "crosshair": "crosshair-tool", "hypothesis": "hypothesis"}


def _load(name: str) -> ModuleType | str:
    """The subcommand's module, or why it cannot run here (a dependency of that part is missing)."""
    module_name = SUBCOMMANDS[name][0]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is not None and module_name.startswith(e.name):
            raise  # our own module is missing: a broken install, not a missing extra
        top = e.name.split(".")[0] if e.name else "?"
        return (f"schedcheck {name} needs the Python module {top!r}, which is not installed; install it with "
                f"`python -m pip install {DISTRIBUTIONS.get(top, top)}`, or reinstall schedcheck with its dependencies")


def _keep_cwd_clean() -> None:
    """Keep Hypothesis's files out of the user's working directory: in the user's cache instead."""
    try:
        from hypothesis.configuration import set_hypothesis_home_dir
    except ModuleNotFoundError:
        return
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    set_hypothesis_home_dir(os.path.join(cache, "schedcheck", "hypothesis"))


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand named in argv: the first argument that is not an option."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="schedcheck", description="Executable spec and conformance suite "
                                     "for the P07 LLM-serving scheduler.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = _command(args_in)
    module: ModuleType | None = None
    for name, (_, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name != chosen:
            continue
        loaded = _load(name)
        if isinstance(loaded, str):
            print(f"error: {loaded}", file=sys.stderr)
            return 2
        module = loaded
        module.add_arguments(p)
    args = parser.parse_args(args_in)
    if args.command is None or module is None:
        parser.print_help()
        return 2
    _keep_cwd_clean()
    try:
        return int(module.main(args))
    except BrokenPipeError:  # the reader went away (`schedcheck check ... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


SAME_RUN = "SCHEDCHECK_SAME_RUN"  # set in the process started again by entry(): no second start
ADDR_NO_RANDOMIZE = 0x0040000  # personality(2)


def same_run_every_time() -> None:
    """Start this command again, once, with string hashing fixed and address-space randomization off.

    A submission checked in this process runs in it: with a random PYTHONHASHSEED and randomized
    addresses, one that iterates a set of its Sequence objects gave a different counterexample in
    every run. The grader's sandboxed children get the same two settings (docs/sandbox.md)."""
    if os.environ.get(SAME_RUN) == "1":
        return
    os.environ[SAME_RUN] = "1"
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.personality(libc.personality(0xFFFFFFFF) | ADDR_NO_RANDOMIZE)
    except (OSError, AttributeError):
        return  # no personality(2) here: run as is
    os.environ["PYTHONHASHSEED"] = "0"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "conformance", *sys.argv[1:]])


def entry() -> None:
    """The `schedcheck` command (and `python -m conformance`)."""
    same_run_every_time()
    sys.exit(main())


if __name__ == "__main__":
    entry()

MAY_IMPORT: tuple[str, ...] = (  # the packages this one builds on (tests/test_layers.py)
    "spec",
    "conformance",
    "conformance.checks",
    "conformance.reports",
    "conformance.starter",
    "conformance.viewer",
    "conformance.wire",
    "conformance.workloads",
)
