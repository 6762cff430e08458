"""Mutation campaign: run every mutant of every style file through the suite and tabulate kills.

A mutant is `killed` when the suite exits 1, `survived` when it exits 0, and `error` for any
other exit code or a timeout. Every survivor is then run against its original on random
workloads (differential.py): identical observations are evidence of an equivalent mutant, a
difference is shrunk to a small workload. Hand-written verdicts from triage.py are attached.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conformance.selfcheck.misses import file_name, missed_text
from conformance.selfcheck.mutate import Mutant, mutants
from conformance.selfcheck.triage import TRIAGE

STYLES_DIR = Path(__file__).resolve().parent / "styles"
# seconds per mutant: far above a pass, and above what the suite spends on a submission that hangs
# (conformance.suite stops after HANGS_EXPLORING + HANGS_SHRINKING runs of RUN_SECONDS each)
TIMEOUTS = {"quick": 180.0, "default": 300.0, "thorough": 1800.0}
DIFF_RUNS = 1000
RETRIES, RETRY_WAIT = 2, 20.0   # reruns of a child whose suite did not start, and the pause before each


@dataclass(slots=True)
class Outcome:
    """What happened to one mutant."""

    mutant_id: str
    style: str                      # style file stem
    operator: str
    description: str
    status: str                     # killed | survived | error
    exit_code: int | None           # None on timeout
    failed_checks: list[str]        # suite checks that did not pass
    seconds: float                  # wall time of the suite on this mutant
    detail: str = ""                # error text or timeout note
    differential: dict[str, Any] = field(default_factory=dict)   # survivors only
    triage: dict[str, str] = field(default_factory=dict)         # survivors only: verdict and reason


def select(all_mutants: list[tuple[str, Mutant]], limit: int | None) -> list[tuple[str, Mutant]]:
    """Pick `limit` mutants deterministically: per style in hash order of the id, styles taken in turn."""
    if limit is None or limit >= len(all_mutants):
        return all_mutants
    by_style: dict[str, list[tuple[str, Mutant]]] = {}
    for style, m in all_mutants:
        by_style.setdefault(style, []).append((style, m))
    queues = [sorted(items, key=lambda item: hashlib.sha256(item[1].mutant_id.encode()).hexdigest())
              for _, items in sorted(by_style.items())]
    picked: list[tuple[str, Mutant]] = []
    while len(picked) < limit:
        for queue in queues:
            if queue and len(picked) < limit:
                picked.append(queue.pop(0))
    order = {m.mutant_id: k for k, (_, m) in enumerate(all_mutants)}
    return sorted(picked, key=lambda item: order[item[1].mutant_id])


def run_child(args: list[str], timeout: float, cwd: Path) -> tuple[int | None, float, str]:
    """Run a worker in its own session; on timeout kill its whole process group. Return (code, seconds, stderr)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "conformance.selfcheck.worker", *args], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, time.perf_counter() - started, f"timeout after {timeout:.0f} s"
    return proc.returncode, time.perf_counter() - started, err[-2000:]


def _settled(entry: dict[str, Any]) -> bool:
    """True when a result is final: the suite finished a report, or the mutant ran out of time."""
    return entry.get("code") is None or entry.get("record", {}).get("exit_code") == entry.get("code")


def check_one(style: str, m: Mutant, profile: str, workdir: Path, timeout: float,
              cache: Path | None = None) -> Outcome:
    """Run the suite on one mutant in a child process; reuse a cached result for the same source and profile."""
    stem = hashlib.sha256(m.mutant_id.encode()).hexdigest()[:16]
    source_sha = hashlib.sha256(m.source.encode()).hexdigest()
    cached = cache / profile / f"{style}__{stem}.json" if cache is not None else None
    entry: dict[str, Any] = {}
    if cached is not None and cached.exists():
        entry = json.loads(cached.read_text())
    if entry.get("source_sha") != source_sha or not _settled(entry):
        src, out = workdir / f"{style}__{stem}.py", workdir / f"{style}__{stem}.json"
        src.write_text(f"# mutant {m.mutant_id}: {m.description}\n" + m.source)
        for attempt in range(RETRIES + 1):
            out.unlink(missing_ok=True)
            code, seconds, err = run_child(["check", str(src), "--profile", profile, "--json", str(out)], timeout,
                                           workdir)
            record = json.loads(out.read_text()) if out.exists() else {}
            if _settled({"code": code, "record": record}) or attempt == RETRIES:
                break
            time.sleep(RETRY_WAIT)   # the suite itself failed to start (say, mid-edit): try again shortly
        entry = {"mutant_id": m.mutant_id, "source_sha": source_sha, "code": code, "seconds": round(seconds, 2),
                 "err": err, "record": record}
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps(entry, indent=1, sort_keys=True))
    code, record = entry["code"], entry["record"]
    # Only a finished report counts: a worker that died on its own (say, an import error) exits 1 too.
    verdict_code = code if record.get("exit_code") == code else None
    status = {0: "survived", 1: "killed"}.get(verdict_code if verdict_code is not None else -1, "error")
    detail = entry["err"] if status == "error" else ""
    if record.get("error"):
        detail = str(record["error"])
    return Outcome(m.mutant_id, style, m.operator, m.description, status, code,
                   list(record.get("failed_checks", [])), entry["seconds"], detail)


def diff_one(outcome: Outcome, m: Mutant, original: Path, workdir: Path, runs: int) -> None:
    stem = hashlib.sha256(m.mutant_id.encode()).hexdigest()[:16]
    src, out = workdir / f"diff__{stem}.py", workdir / f"diff__{stem}.json"
    src.write_text(m.source)
    code, _, err = run_child(["diff", str(original), str(src), "--runs", str(runs), "--json", str(out)],
                             timeout=600.0, cwd=workdir)
    outcome.differential = json.loads(out.read_text()) if out.exists() and code == 0 else {
        "identical": False, "error": err or "the differential run did not finish"}


def collect(styles_dir: Path) -> list[tuple[str, Mutant]]:
    files = sorted(styles_dir.glob("*.py"))
    if not files:
        raise SystemExit(f"--styles {str(styles_dir)!r} holds no .py files; point it at a folder of submissions")
    return [(path.stem, m) for path in files for m in mutants(path.read_text(), path.name)]


def rate(killed: int, considered: int) -> str:
    return f"{100.0 * killed / considered:5.1f}%" if considered else "    -"


def table(outcomes: Iterable[Outcome]) -> str:
    """Kill rate per style and overall; equivalent mutants (by triage) leave the denominator."""
    rows: dict[str, list[Outcome]] = {}
    for o in outcomes:
        rows.setdefault(o.style, []).append(o)
    lines = [f"{'style':18} {'mutants':>7} {'killed':>6} {'survived':>8} {'equiv':>5} {'missed':>6} {'error':>5} "
             f"{'raw kill':>8} {'kill rate':>9} {'s/mutant':>8}"]
    everything = [o for group in rows.values() for o in group]
    for name, group in [*sorted(rows.items()), ("ALL", everything)]:
        killed = sum(o.status == "killed" for o in group)
        survived = sum(o.status == "survived" for o in group)
        errors = sum(o.status == "error" for o in group)
        equiv = sum(o.triage.get("verdict") == "equivalent" for o in group)
        missed = sum(o.triage.get("verdict") == "missed" for o in group)
        secs = sum(o.seconds for o in group) / max(1, len(group))
        lines.append(f"{name:18} {len(group):7d} {killed:6d} {survived:8d} {equiv:5d} {missed:6d} {errors:5d} "
                     f"{rate(killed, len(group)):>8} {rate(killed, killed + survived - equiv):>9} {secs:8.2f}")
    return "\n".join(lines)


def triage_of(o: Outcome) -> dict[str, str]:
    """The hand verdict for a survivor, or what the differential run alone suggests."""
    if o.mutant_id in TRIAGE:
        verdict, reason = TRIAGE[o.mutant_id]
        identical = bool(o.differential.get("identical"))
        evidence = (f"identical on {o.differential.get('runs')} random workloads" if identical
                    else f"differs: {o.differential.get('workload') or o.differential.get('error')}")
        if verdict == "equivalent" and not identical:
            verdict = "contested"   # the hand argument and the differential run disagree: look again
        return {"verdict": verdict, "reason": reason, "evidence": evidence}
    if o.differential.get("identical"):
        return {"verdict": "unreviewed", "reason": f"identical on {o.differential.get('runs')} random workloads"}
    return {"verdict": "unreviewed", "reason": "differs from its original: " + str(o.differential.get("workload"))}


def write_missed(folder: Path, o: Outcome, m: Mutant, profile: str) -> Path:
    """Save a missed mutant as a standalone submission whose docstring names the bug and the workload."""
    path = folder / file_name(o.mutant_id)
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(missed_text(m, str(o.triage.get("reason")), profile, o.differential.get("workload"),
                                o.differential.get("difference")))
    return path


def main(argv: list[str] | None = None) -> int:
    """The campaign's command line; most of its length is the options."""
    parser = argparse.ArgumentParser(
        prog="python -m conformance.selfcheck",
        description="measure how many one-change mutants of the style files the suite kills")
    parser.add_argument("--profile", choices=sorted(TIMEOUTS), default="quick")
    parser.add_argument("--styles", type=Path, default=STYLES_DIR, help="folder of correct submissions to mutate")
    parser.add_argument("--limit", type=int, default=None, help="check a deterministic sample of N mutants")
    parser.add_argument("--jobs", type=int, default=1, help="mutants checked at once (at most the free cores)")
    parser.add_argument("--json", type=Path, default=None, help="write every outcome to this JSON file")
    parser.add_argument("--cache", type=Path, default=None,
                        help="folder of per-mutant results to reuse, so an interrupted campaign resumes")
    parser.add_argument("--write-missed", type=Path, default=None,
                        help="save every survivor triaged 'missed' as a standalone file in this folder")
    parser.add_argument("--diff-runs", type=int, default=DIFF_RUNS, help="random workloads per survivor")
    parser.add_argument("--redo", metavar="STATUS", action="append", choices=("error", "survived", "killed"),
                        help="with --from: check again only the mutants that had this status (repeatable), "
                             "keep every other outcome; after a change to the suite")
    parser.add_argument("--from", dest="previous", type=Path, default=None,
                        help="an earlier --json result: its mutants are the ones checked, its outcomes kept")
    args = parser.parse_args(argv)
    if args.jobs < 1 or (args.limit is not None and args.limit < 1):
        parser.error(f"--jobs and --limit must be >= 1, got jobs={args.jobs} limit={args.limit}")
    if (args.redo is None) != (args.previous is None):
        parser.error("--redo and --from go together: --from names the earlier result, --redo what to check again")
    everything = collect(args.styles)
    chosen = select(everything, args.limit)
    kept: list[Outcome] = []
    if args.previous is not None:
        chosen, kept, args.limit = _redo(everything, args.previous, set(args.redo), args.profile)
    originals = {p.stem: p.resolve() for p in args.styles.glob("*.py")}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="selfcheck-") as tmp, ThreadPoolExecutor(args.jobs) as pool:
        workdir = Path(tmp)
        futures = [pool.submit(check_one, style, m, args.profile, workdir, TIMEOUTS[args.profile], args.cache)
                   for style, m in chosen]
        outcomes = list(kept)
        for k, fut in enumerate(futures, 1):
            outcomes.append(fut.result())
            print(f"[{k}/{len(futures)}] {outcomes[-1].status:8} {outcomes[-1].mutant_id}", file=sys.stderr, flush=True)
        by_id = {m.mutant_id: (style, m) for style, m in chosen}
        survivors = [o for o in outcomes if o.status == "survived" and o not in kept]
        list(pool.map(lambda o: diff_one(o, by_id[o.mutant_id][1], originals[o.style], workdir, args.diff_runs),
                      survivors))
    for o in survivors:
        o.triage = triage_of(o)
    order = {m.mutant_id: k for k, (_, m) in enumerate(everything)}
    outcomes.sort(key=lambda o: order.get(o.mutant_id, len(order)))
    if args.write_missed is not None:
        for o in survivors:
            if o.triage.get("verdict") == "missed":
                write_missed(args.write_missed, o, by_id[o.mutant_id][1], args.profile)
    print(table(outcomes))
    if args.json is not None:
        result = {
            "format": "schedcheck/selfcheck-campaign", "profile": args.profile, "limit": args.limit,
            "styles": sorted(originals), "mutants": len(outcomes), "seconds": round(time.perf_counter() - started, 1),
            "corpus_exclusion": corpus_note(),
            "outcomes": [asdict(o) for o in outcomes],
        }
        args.json.write_text(json.dumps(result, indent=1, sort_keys=True))
    return 0


def _redo(everything: list[tuple[str, Mutant]], previous: Path, redo: set[str],
          profile: str) -> tuple[list[tuple[str, Mutant]], list[Outcome], int | None]:
    """The mutants of an earlier campaign to check again (those whose status is in `redo`) and the outcomes kept."""
    try:
        data = json.loads(previous.read_text())
        before = [Outcome(**o) for o in data["outcomes"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"--from {previous}: not a campaign result ({type(e).__name__}: {e}); "
                         "pass a file written by --json") from None
    if data.get("profile") != profile:
        raise SystemExit(f"--from {previous} was measured with --profile {data.get('profile')}, not {profile}")
    again = {o.mutant_id for o in before if o.status in redo}
    known = {m.mutant_id for _, m in everything}
    gone = sorted(o.mutant_id for o in before if o.mutant_id not in known)
    if gone:
        raise SystemExit(f"--from {previous}: {len(gone)} of its mutants no longer exist (the styles changed), "
                         f"e.g. {gone[0]}; run the whole campaign again")
    wanted = {o.mutant_id for o in before}
    return ([(s, m) for s, m in everything if m.mutant_id in again],
            [o for o in before if o.mutant_id in wanted - again], data.get("limit"))


def corpus_note() -> str:
    """Say how the frozen counterexamples corpus was kept out, since the CLI has no switch for it."""
    from conformance.selfcheck.worker import EXCLUDED_FAMILIES, corpus_families

    families = corpus_families()
    if families is None:
        return "not excluded: no corpus MANIFEST.json was found, so every corpus vector ran"
    return (f"mutants run through conformance.suite.run(families=...) with families "
            f"{[f for f in families if f not in EXCLUDED_FAMILIES]} (excluded: {list(EXCLUDED_FAMILIES)}), as "
            "`schedcheck check --exclude-family` does")
