"""``schedcheck prove``: run the claims, print one table, store or compare the results file.

Rows: every bounded claim (BMC on the z3 encoding), the induction step of each
claim, and the explicit-state model check. With ``--inject BUG`` the model has
the catalog bug and the command succeeds when at least one claim breaks and
every counterexample reproduces on the Python model with that bug and on the
mutant submission conformance/mutants/BUG.py, while the references pass it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from conformance.catalog import BY_NAME as CATALOG
from spec.bounded import checks, induction, modelcheck, variants
from spec.bounded.crossreplay import cross_replay, mutant_path, reproduced
from spec.bounded.encode import Bounds
from spec.bounded.replay import confirm

HERE = Path(__file__).parent
QUICK = Bounds(slots=2, steps=3, num_blocks=6, block_size=4, budget=6, max_num_seqs=2, prompt_len=6, max_tokens=3)
FULL = Bounds(slots=2, steps=4)
MODEL_CHECK_QUICK = dict(num_blocks=4, block_size=2, budget=4, max_num_seqs=2, requests=2, prompt_len=3, max_tokens=2)
MODEL_CHECK_FULL = dict(num_blocks=5, block_size=2, budget=4, max_num_seqs=2, requests=2, prompt_len=4, max_tokens=3)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help=f"CI bounds ({QUICK.slots} slots, {QUICK.steps} steps)")
    for name, default in (("slots", FULL.slots), ("steps", FULL.steps), ("num-blocks", 8), ("block-size", 4),
                          ("budget", 8), ("max-num-seqs", 3), ("prompt-len", 8), ("max-tokens", 4)):
        p.add_argument(f"--{name}", type=int, default=None, help=f"bound (default {default}; --quick: smaller)")
    p.add_argument("--induction-slots", type=int, default=None, help="N for the induction step (default 3; quick 2)")
    p.add_argument("--inject", metavar="BUG", choices=sorted(CATALOG), help="inject a catalog bug into the model")
    p.add_argument("--only", metavar="CLAIM", action="append", help="check only these claims (repeatable)")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds per solver query, then the verdict is unknown (default 600; with --inject 30)")
    p.add_argument("--write-results", action="store_true", help="store the table in spec/bounded/results*.json")
    p.add_argument("--cex-dir", type=Path, default=None, help="write each counterexample workload here as JSON")
    p.add_argument("--coverage", action="store_true",
                   help="instead of the claims, regenerate conformance/workloads/data/coverage/ (one case per rule id)")


def _bounds(args: argparse.Namespace) -> Bounds:
    base = QUICK if args.quick else FULL
    over = {f: getattr(args, f) for f in ("slots", "steps", "num_blocks", "block_size", "budget", "max_num_seqs",
                                          "prompt_len", "max_tokens") if getattr(args, f, None) is not None}
    for f, v in over.items():
        if v < 1:
            raise SystemExit(f"--{f.replace('_', '-')} must be >= 1, got {v}")
    return Bounds(**{**{f: getattr(base, f) for f in Bounds.__slots__}, **over})  # type: ignore[arg-type]


def main(args: argparse.Namespace) -> int:
    if getattr(args, "coverage", False):
        from spec.bounded import coverage
        return coverage.main([])
    bug = args.inject
    if bug and bug not in variants.EXPRESSIBLE:
        print(f"{bug}: not expressible in the encoding: {variants.NOT_EXPRESSIBLE.get(bug, 'unknown')}")
        return 1
    bounds = _bounds(args)
    if bug and args.slots is None:
        bounds = Bounds(**{**{f: getattr(bounds, f) for f in Bounds.__slots__}, "slots": 3})  # order bugs need 3
    timeout = args.timeout if args.timeout is not None else (30.0 if bug else 600.0)
    names = args.only or [c.name for c in checks.CLAIMS]
    rows: list[dict[str, object]] = []
    ok = True
    broken = 0
    for name in names:
        r = checks.check(name, bounds, bug, timeout)
        row = {"claim": name, "kind": "bmc", **r.to_json()}
        if r.verdict == "counterexample" and r.workload is not None:
            broken += 1
            row["replay"] = confirm(name, r.workload, bug, bounds.steps)
            if bug:
                row.update(cross_replay(r.workload, bug))
            if args.cex_dir:
                args.cex_dir.mkdir(parents=True, exist_ok=True)
                (args.cex_dir / f"{name}{'-' + bug if bug else ''}.json").write_text(json.dumps(r.workload, indent=1))
        ok &= r.verdict == "proved" if not bug else True
        rows.append(row)
    if not bug and not args.only:
        n_ind = args.induction_slots or (2 if args.quick else 3)
        t = time.perf_counter()
        rows.append({"claim": "Inv initial", "kind": "induction", "slots": n_ind,
                     "verdict": "proved" if induction.initial_holds(n_ind) else "counterexample",
                     "seconds": round(time.perf_counter() - t, 2)})
        for o in induction.prove(n_ind, timeout=timeout):
            rows.append({"claim": o.claim, "kind": "induction", "slots": o.slots, "block_sizes": list(o.block_sizes),
                         "verdict": o.verdict, "seconds": o.seconds})
        scope = MODEL_CHECK_QUICK if args.quick else MODEL_CHECK_FULL
        rep, scopes = modelcheck.explore_all(**scope)  # type: ignore[arg-type]
        rows.append({"claim": "I1..I6 + no deadlock", "kind": "modelcheck", "bounds": scope, "scopes": scopes,
                     "distinct_states": rep.distinct, "depth": rep.depth, "states_per_second": int(rep.per_second),
                     "verdict": "proved" if rep.violation is None else "counterexample",
                     "seconds": round(rep.seconds, 2)})
        ok &= all(r["verdict"] == "proved" for r in rows)
    _print(rows)
    if bug:
        cexes = [r for r in rows if r["verdict"] == "counterexample"]
        on_model = all(r.get("replay") != "not reproduced" for r in cexes)
        on_mutant = all(reproduced(r) for r in cexes)
        mutant = _mutant_label(bug)
        if not broken:
            print(f"{bug}: no claim breaks at N={bounds.slots}, K={bounds.steps}, so there is nothing to replay. "
                  f"LIVE and OUT break only when the liveness bound fits in K steps: try --slots 2 or more --steps; "
                  f"a bug that breaks no claim is left to the conformance suite (schedcheck check {mutant})")
        else:
            print(f"{bug}: {broken} claim(s) broken; every counterexample "
                  f"{'reproduces' if on_model else 'does NOT reproduce'} on the Python model with the bug, "
                  f"{'fails' if on_mutant else 'does NOT always fail'} {mutant} and the references "
                  f"{'pass it' if all(r.get('reference') == 'pass' for r in cexes) else 'do NOT all pass it'}")
        return 0 if broken and on_model and on_mutant else 1
    if args.write_results:
        path = HERE / ("results-quick.json" if args.quick else "results.json")
        store(path, rows, bounds, partial=bool(args.only))
        print(f"wrote {path}")
    return 0 if ok else 1


def store(path: Path, rows: list[dict[str, object]], bounds: Bounds, partial: bool = False) -> None:
    """Write the results file, keeping BMC rows of other bounds (so a run at larger bounds adds to the table
    instead of replacing it); a partial run (--only) replaces just its own rows, so one slow claim can be
    rerun alone. Each BMC row names its bounds."""
    def key(r: dict[str, object]) -> tuple[object, ...]:
        b = r.get("bounds")
        return (r["claim"], r["kind"]) + ((b["slots"], b["steps"]) if r["kind"] == "bmc" and isinstance(b, dict)
                                          else ())
    header = {f: getattr(bounds, f) for f in Bounds.__slots__}
    if path.exists():
        old = json.loads(path.read_text())
        fresh = {key(r) for r in rows}
        here = (bounds.slots, bounds.steps)
        # a partial run keeps every other row; a full run keeps only the BMC rows of other bounds
        merged = [r for r in old["rows"] if key(r) not in fresh
                  and (partial or (r["kind"] == "bmc" and key(r)[2:] != here))] + rows
        order = [c.name for c in checks.CLAIMS]
        rows = sorted((r for r in merged if r["kind"] == "bmc"),
                      key=lambda r: (key(r)[2:], order.index(str(r["claim"])))) + \
            [r for r in merged if r["kind"] != "bmc"]
        header = old["bounds"] if partial else header
    path.write_text(json.dumps({"bounds": header, "rows": rows}, indent=1) + "\n")


def _print(rows: list[dict[str, object]]) -> None:
    print(f"{'claim':<22} {'kind':<10} {'bounds':<34} {'verdict':<15} {'seconds':>8}")
    for r in rows:
        b = r.get("bounds")
        if r["kind"] == "bmc" and isinstance(b, dict):
            where = f"N={b['slots']} K={b['steps']} nb<={b['num_blocks']} bs<={b['block_size']} B<={b['budget']}"
        elif r["kind"] == "induction":
            where = f"N={r['slots']}, any length, bs in {r.get('block_sizes', '1..4')}"
        else:
            where = f"{r.get('scopes')} scopes, {r.get('distinct_states')} states, depth {r.get('depth')}"
        extra = f"  step {r['step']} (model: {r.get('replay')}" if r.get("step") and r["verdict"] == "counterexample" \
            else ""
        if extra:
            extra += f"; mutant: {r['mutant']}; reference: {r['reference']})" if "mutant" in r else ")"
        print(f"{r['claim']:<22} {r['kind']:<10} {where:<34} {r['verdict']:<15} {r['seconds']:>8}{extra}")


def _mutant_label(bug: str) -> str:
    """The mutant submission's path, relative to the working directory when it is below it."""
    path = mutant_path(bug)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
