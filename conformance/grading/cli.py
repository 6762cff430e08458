"""``schedcheck grade`` and ``schedcheck merge``: grade a folder of submissions, merge shards."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
from collections import Counter
from concurrent.futures import Executor
from contextlib import ExitStack
from pathlib import Path

from conformance.cli.policy import add_policy_argument
from conformance.grading.batch import grade_all, in_shard, parse_shard
from conformance.grading.collect import collect
from conformance.grading.heldout import SEED_ENV, SeedError, fingerprint, held_out_seed
from conformance.grading.records import GRADER_ERROR, NOT_GRADED, statuses, write_summary
from conformance.grading.rubric import RubricError, load_rubric, under_policy


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`schedcheck grade`'s arguments, or `schedcheck merge`'s (this module serves both)."""
    if parser.prog.split()[-1] == "merge":
        add_merge_arguments(parser)
        return
    parser.add_argument("submissions", metavar="SUBMISSIONS",
                        help="a folder whose entries are .py files, folders holding p07_scheduler.py, zips of those, "
                             "or folders holding a wire.toml (a program in any language)")
    parser.add_argument("--out", required=True, metavar="DIR", help="where OUT/<entry>/results.json etc. go")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="submissions graded at once (default 1)")
    parser.add_argument("--rubric", metavar="FILE", help="a rubric TOML (default: the bundled rubric.toml)")
    parser.add_argument("--profile", default=None, choices=("quick", "default", "thorough"),
                        help="exploration beyond the corpus (default: the rubric's); never changes the corpus score "
                             "unless the rubric counts exploration")
    add_policy_argument(parser, default=None, otherwise="the rubric's policy, p07 unless it sets one")
    parser.add_argument("--force", action="store_true", help="regrade entries already graded with this rubric")
    parser.add_argument("--shard", metavar="i/N", help="grade only shard i of N (merge with `schedcheck merge`)")
    parser.add_argument("--same-uid", action="store_true",
                        help="grade with held-out cases even where submissions would run under your own uid (the "
                             "process-group level as a normal user), where they can read the seed and each other")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="local processes (default) or a Dask cluster (needs schedcheck[dask])")
    parser.add_argument("--scheduler-address", metavar="ADDR",
                        help="the Dask scheduler to use; without it a LocalCluster with --jobs workers is started")


def add_merge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT", help="a folder holding graded entries, e.g. shards copied together")
    parser.add_argument("--rubric", metavar="FILE", help="the rubric the entries were graded with")


def dask_executor(stack: ExitStack, jobs: int, address: str | None) -> Executor:
    """A concurrent.futures executor backed by Dask distributed (an optional extra)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SystemExit("schedcheck grade: --executor dask needs Dask distributed; "
                         "install it with: pip install 'schedcheck[dask]'") from None
    if address:
        client = stack.enter_context(Client(address))
    else:
        cluster = stack.enter_context(LocalCluster(n_workers=max(jobs, 1), threads_per_worker=1, processes=True,
                                                   dashboard_address=None))
        client = stack.enter_context(Client(cluster))
    return client.get_executor(pure=False)


def main(args: argparse.Namespace) -> int:
    if getattr(args, "command", "grade") == "merge":
        return merge_main(args)
    from conformance.grading.judge import check_scope, grade_one, with_profile
    from conformance.grading.warm import warm

    try:
        rubric = load_rubric(args.rubric)
        if args.policy is not None:
            rubric = under_policy(rubric, args.policy)
        check_scope(rubric)
        shard = parse_shard(args.shard) if args.shard else (0, 1)
    except (RubricError, ValueError) as e:
        print(f"schedcheck grade: {e}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print(f"schedcheck grade: --jobs must be >= 1, got {args.jobs}", file=sys.stderr)
        return 2
    if args.profile:
        rubric = with_profile(rubric, args.profile)
    if rubric.held_out:
        try:
            seed, where = held_out_seed()
        except (SeedError, OSError) as e:
            print(f"schedcheck grade: {e}", file=sys.stderr)
            return 2
        shared = shared_uid_problem()
        if shared and not getattr(args, "same_uid", False):
            print(f"schedcheck grade: {shared}", file=sys.stderr)
            return 2
        os.environ[SEED_ENV] = str(seed)  # every worker draws the same held-out cases
        print(f"schedcheck grade: {rubric.held_out} held-out cases from the seed in {where} (fingerprint "
              f"{fingerprint(seed)}; keep the seed private, and the same for regrades)", file=sys.stderr)
    signal.signal(signal.SIGTERM, stopped)  # an instructor's kill unwinds like Ctrl-C: children and folders go
    out = Path(args.out)
    lost: list[tuple[str, str]] = []  # entries whose failure no folder could hold: summary rows, exit 1
    with tempfile.TemporaryDirectory(prefix="schedcheck-unzip-") as work, ExitStack() as stack:
        os.chmod(work, 0o700)  # unpacked submissions: readable by the grader only, never by a sandbox's uid
        try:
            entries = in_shard(collect(args.submissions, work), shard)
        except (NotADirectoryError, OSError) as e:
            print(f"schedcheck grade: {e}", file=sys.stderr)
            return 2
        executor = dask_executor(stack, args.jobs, args.scheduler_address) if args.executor == "dask" else None
        if not out.exists():
            out.mkdir(parents=True, mode=0o700)  # grades are the instructor's: no other uid may read them
        grade_all(entries, out, rubric, grade_one, jobs=args.jobs, executor=executor, force=args.force, warm=warm,
                  lost=lost, apart=True)
    write_summary(out, rubric, lost)
    status = statuses(out)
    print(closing_line(out, status), file=sys.stderr)
    failed = sorted(n for n, s in status.items() if s == GRADER_ERROR)
    if failed or lost:
        names = sorted({*failed, *(name for name, _ in lost)})
        print(f"schedcheck grade: no grade for {', '.join(names[:10])}{' ...' if len(names) > 10 else ''} "
              "(status 'grader error' in summary.csv, cause in <entry>/grader_error.txt); rerun to regrade them",
              file=sys.stderr)
        return 1
    return 3 if NOT_GRADED in status.values() else 0


def stopped(signum: int, frame: object) -> None:
    """SIGTERM as an exit: every finally block and exit hook runs (sandboxed children killed, their run folders
    and the class's folder under /tmp removed), where the default action left them behind."""
    raise SystemExit(128 + signum)


def shared_uid_problem() -> str:
    """Why held-out cases would not be held out here ("" when they are): at the process-group level as a normal
    user, every submission runs under the grader's own uid, so it can read the seed (this process's environment,
    the seed file), the other submissions and the grades (docs/sandbox.md, "Isolation levels")."""
    from conformance.grading.judge import deployment
    from conformance.sandbox.isolation import detect

    if os.geteuid() == 0:
        return ""  # a fresh uid per run, at every level
    try:
        level = detect(deployment()[0]).level
    except ValueError:
        return ""  # no level works: the sandbox says so when it starts
    if level != "process-group":
        return ""
    return ("submissions would run at the process-group level under your own uid, where they can read the held-out "
            "seed, each other and the grades: grade as root (each run gets a fresh uid) or on a machine with user "
            "namespaces, or pass --same-uid to grade anyway (or set [held_out] count = 0 in the rubric)")


def closing_line(out: Path, status: dict[str, str]) -> str:
    """What the run did to every entry, and every file it wrote."""
    counts = Counter(status.values())
    graded, unused, failed = counts["graded"], counts[NOT_GRADED], counts[GRADER_ERROR]
    why = " (the submission cannot be used: the reason is in summary.csv)" if unused else ""
    return (f"schedcheck grade: {graded} graded, {unused} not graded{why}, {failed} grader errors; wrote "
            f"{out}/summary.csv, {out}/overview.md, {out}/overview.html (the class dashboard) and, per entry, "
            f"{out}/<entry>/report.md, results.json, junit.xml, grade.json, and where the entry has a "
            "counterexample, counterexample.json and report.html (it in the viewer)")


def merge_main(args: argparse.Namespace) -> int:
    try:
        rubric = load_rubric(args.rubric)
    except RubricError as e:
        print(f"schedcheck merge: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if not out.is_dir():
        print(f"schedcheck merge: {str(out)!r} is not a folder of graded entries", file=sys.stderr)
        return 2
    grades = write_summary(out, rubric)
    print(f"schedcheck merge: {len(grades)} entries; wrote {out}/summary.csv, {out}/overview.md and "
          f"{out}/overview.html", file=sys.stderr)
    return 0

