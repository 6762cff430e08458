"""The results table of `schedcheck prove`: printed a row at a time, and stored in spec/bounded/results*.json.

Each row is one claim checked one way (validation, BMC, induction, model check) with its bounds, its
verdict and its seconds; docs/proofs.md's tables are generated from the stored files (doc.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from spec.bounded import checks
from spec.bounded.doc import broken_table, quota_table, reach_table
from spec.bounded.encode import Bounds


class Rows(list[dict[str, object]]):
    """The table, printed a row at a time as each check ends (a long run shows its progress)."""

    def __init__(self, saved: Callable[[bool], None] | None = None) -> None:
        super().__init__()
        self.saved = saved

    def append(self, row: dict[str, object]) -> None:
        if not self:
            print_rows([], header=True)
        print_rows([row], header=False)
        super().append(row)
        if self.saved is not None:
            self.saved(False)


def store(path: Path, rows: list[dict[str, object]], bounds: Bounds, partial: bool = False,
          complete: bool = True, wall: float | None = None) -> None:
    """Write the results file, keeping BMC rows of other bounds (so a run at larger bounds adds to the table
    instead of replacing it); a partial run (--only) replaces just its own rows, so one slow claim can be
    rerun alone. Each BMC row names its bounds and whether it assumed the induction invariant."""
    def key(r: dict[str, object]) -> tuple[object, ...]:
        b = r.get("bounds")
        return (r["claim"], r["kind"]) + ((b["slots"], b["steps"], bool(r.get("lemmas")))
                                          if r["kind"] == "bmc" and isinstance(b, dict) else ())
    header = bounds.to_json()
    if path.exists():
        old = json.loads(path.read_text())
        fresh = {key(r) for r in rows}
        here = (bounds.slots, bounds.steps)
        # a partial run keeps every other row; a full run keeps only the BMC rows of other bounds
        merged = [r for r in old["rows"] if key(r) not in fresh
                  and (partial or (r["kind"] == "bmc" and key(r)[2:4] != here))] + rows
        order = [c.name for c in checks.CLAIMS]
        rows = sorted((r for r in merged if r["kind"] == "bmc"),
                      key=lambda r: (key(r)[2:], order.index(str(r["claim"])))) + \
            [r for r in merged if r["kind"] != "bmc"]
        header = old["bounds"] if partial else header
        if partial:  # the other rows stay, so a stopped partial run leaves every row there (old or new)
            complete, wall = old.get("complete", True), old.get("wall_seconds")
    out: dict[str, object] = {"bounds": header, "complete": complete}
    if wall is not None:
        out["wall_seconds"] = wall  # the whole run, wall clock
    path.write_text(json.dumps(out | {"rows": rows}, indent=1) + "\n")


def print_rows(rows: list[dict[str, object]], header: bool = True) -> None:
    if header:
        print(f"{'claim':<24} {'kind':<10} {'bounds':<44} {'verdict':<15} {'seconds':>8}", flush=True)
    for r in rows:
        b = r.get("bounds")
        if r["kind"] == "bmc" and isinstance(b, dict):
            where = (f"N={b['slots']} K={b['steps']} nb<={b['num_blocks']} bs<={b['block_size']} B<={b['budget']}"
                     f"{' +Inv' if r.get('lemmas') else ''}")
        elif r["kind"] == "induction":
            where = f"N={r['slots']}, any length, bs in {r.get('block_sizes', '1..4')}"
            if r["verdict"] != "proved" and r.get("block_sizes_proved"):
                where += f" (proved: {r['block_sizes_proved']})"
        elif r["kind"] == "reach":
            where = f"{len(r['premises'])} premises x {len(r['anywhere'])} kinds"  # type: ignore[arg-type]
        elif r["kind"] == "arithmetic":
            where = "block_size and tokens to 2^64+1"
        elif r["kind"] == "eos":
            where = f"{r['workloads']} workloads, eos {', '.join(r['eos_values'])}"  # type: ignore[arg-type]
        elif r["kind"] == "wide":
            where = f"{r['workloads']} workloads, N<=5, K=24, sizes<=17"
        elif r["kind"] == "scale":
            where = f"{r['workloads']} workloads, {r['steps']} steps, to 2^{max(r['tier']['number_bits'])}+1"  # type: ignore[index]
        elif r["kind"] == "vacuity":
            where = f"{r['runs']} runs, {r['judged']} verdicts"
        elif r["kind"] == "validation":
            where = (f"{r['workloads']} workloads, {r['steps']} steps, "
                     f"{100 * int(r['steps'] and r['preempting_steps']) // max(int(r['steps']), 1)}% preempt")  # type: ignore[call-overload]
        else:
            assert isinstance(b, dict)
            where = f"{b['requests']} req: {r.get('scopes')} scopes, {r.get('distinct_states')} states"
        extra = f"  step {r['step']}" if r.get("step") and r["verdict"] == "counterexample" else ""
        if r["kind"] == "modelcheck" and r.get("broken"):
            extra = "  broken: " + ", ".join(str(x["claim"]) for x in r["broken"])  # type: ignore[attr-defined]
        if r["kind"] in ("arithmetic", "eos", "vacuity", "wide", "scale") and r.get("first_difference"):
            extra = f"  {r['first_difference']}"
        if r["kind"] == "reach" and r.get("ends_missed"):
            extra = "  no run takes " + ", ".join(r["ends_missed"])  # type: ignore[arg-type]
        print(f"{r['claim']:<24} {r['kind']:<10} {where:<44} {r['verdict']:<15} {r['seconds']:>8}{extra}", flush=True)
        if r["kind"] == "vacuity" and r.get("short"):
            extra += "  broken on too few steps: " + ", ".join(r["short"])  # type: ignore[arg-type]
        for line in quota_table(r) + reach_table(r) + broken_table(r):
            print(f"    {line}", flush=True)
