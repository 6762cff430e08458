"""The command-line side of the wire adapter: --wire and --wire-timeout on `check` and `replay`."""

from __future__ import annotations

import argparse
import shlex

from conformance.wire.connection import REPLY_SECONDS

ADAPTER = "conformance.wire"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wire", metavar="CMD", help="check a program in any language that speaks the wire "
                        "protocol on stdin/stdout (docs/wire-protocol.md); CMD is quoted and run without a shell")
    parser.add_argument("--wire-timeout", metavar="SECONDS", type=float,
                        help=f"seconds the wire program has for each reply (default {REPLY_SECONDS:g})")


def target_from_args(args: argparse.Namespace) -> tuple[str, str | None, str]:
    """(target, adapter, the target as typed on a command line) from PATH/--adapter/--wire; ValueError if unclear."""
    if args.wire is None:
        if args.path is None:
            raise ValueError("give PATH (a submission file, a dotted module, 'impl' or 'spec') or --wire \"CMD\"")
        if args.wire_timeout is not None:
            raise ValueError("--wire-timeout applies only with --wire")
        shown = args.path if args.adapter is None else f"{shlex.quote(args.path)} --adapter {args.adapter}"
        return args.path, args.adapter, shown  # as typed: rerun hints must carry the adapter too
    if args.path is not None or args.adapter is not None:
        raise ValueError(f"--wire runs a program and takes no PATH or --adapter (got {args.path or args.adapter!r}); "
                         "put the program's arguments inside the quoted command")
    if args.wire_timeout is None:
        return args.wire, ADAPTER, typed(args.wire)
    adapter = f"{ADAPTER}?reply_seconds={args.wire_timeout!r}"  # an adapter option travels with the adapter's name
    return args.wire, adapter, typed(args.wire, args.wire_timeout)


def typed(cmd: str, reply_seconds: float | None = None) -> str:
    """The options that name the program `cmd` on a command line (`--wire 'node sched.js'`), as every rerun hint
    and report writes them: `schedcheck replay TRACE` followed by these runs the same program the same way."""
    timeout = "" if reply_seconds is None else f" --wire-timeout {reply_seconds!r}"
    return f"--wire {shlex.quote(cmd)}{timeout}"
