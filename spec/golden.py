"""The card's worked cases as data (spec/golden/*.toml) and the step-by-step check against them.

The files are written by hand from the card and never regenerated. The check
compares a trace in the JSON form of docs/trace-format.md, so the same files
judge the model, impl and any submission's recorded trace.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec.errors import InvalidWorkload
from spec.model import Config
from spec.trace import Request, Workload, make_workload

GOLDEN_DIR = Path(__file__).parent / "golden"


@dataclass(frozen=True)
class GoldenCase:
    """One worked case: its workload and the expected fields, step by step."""

    name: str
    source: str
    workload: Workload
    steps: tuple[dict[str, Any], ...]
    end: dict[str, Any]


def load_case(path: str | Path) -> GoldenCase:
    """Read one golden TOML file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
        config = Config(**data["config"])
        requests = [Request(seq_id, prompt_len, max_tokens) for seq_id, prompt_len, max_tokens in data["add"]]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as e:
        raise InvalidWorkload(f"golden case {str(path)!r} is malformed: {e!r}") from None
    workload = make_workload(config, requests, data.get("sample"), None, data["name"], data.get("tags", ()))
    return GoldenCase(data["name"], data.get("source", ""), workload, tuple(data["steps"]), data.get("end", {}))


def golden_cases() -> tuple[GoldenCase, ...]:
    """Every bundled golden case, by file name."""
    return tuple(load_case(p) for p in sorted(GOLDEN_DIR.glob("*.toml")))


def case_named(name: str) -> GoldenCase:
    for case in golden_cases():
        if case.name == name:
            return case
    known = ", ".join(c.name for c in golden_cases())
    raise InvalidWorkload(f"no golden case named {name!r}; known cases: {known}")


def _snapshot_diffs(where: str, want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """The card's values a snapshot differs from; a value the snapshot holds as None is one the scheduler does not
    give (a trace's snapshot may lack blocks_used, num_preemptions, num_tokens or num_blocks), and is not compared."""
    out = []
    for key in ("blocks_used", "waiting", "running", "num_preemptions"):
        if key in want and got.get(key) != want[key] and not (key in got and got[key] is None):
            out.append(f"{where}: {key} is {got.get(key)!r}, the card says {want[key]!r}")
    for seq_id, (nc, nt, nb) in want.get("seqs", {}).items():
        q = got.get("seqs", {}).get(seq_id, {})
        have = [q.get("num_computed"), q.get("num_tokens"), q.get("num_blocks")]
        if any(h != w and not (name in q and h is None)
               for name, h, w in zip(("num_computed", "num_tokens", "num_blocks"), have, (nc, nt, nb), strict=True)):
            out.append(f"{where}: {seq_id} num_computed/num_tokens/num_blocks is {have}, the card says {[nc, nt, nb]}")
    for seq_id, output in want.get("outputs", {}).items():
        have = got.get("seqs", {}).get(seq_id, {}).get("output")
        if have != output:
            out.append(f"{where}: {seq_id}.output is {have}, the card says {output}")
    return out


def check_case(case: GoldenCase, trace: dict[str, Any]) -> list[str]:
    """Compare a trace (JSON form) with the case, every step; return the mismatches, first ones first."""
    out: list[str] = []
    steps = trace.get("steps", [])
    if len(steps) != len(case.steps):
        out.append(f"{case.name}: the run took {len(steps)} steps, the card's case takes {len(case.steps)}")
    for i, (want, got) in enumerate(zip(case.steps, steps, strict=False), start=1):
        where = f"{case.name} step {i}"
        batch = [list(p) for p in got.get("schedule", [])]
        if batch != want["schedule"]:
            out.append(f"{where}: schedule() returned {batch}, the card says {want['schedule']} (order matters)")
        if "finished" in want and list(got.get("finished", [])) != want["finished"]:
            out.append(f"{where}: update() returned {got.get('finished')}, the card says {want['finished']}")
        if "after_schedule" in want and "after_schedule" in got:
            out.extend(_snapshot_diffs(f"{where} after schedule()", want["after_schedule"], got["after_schedule"]))
        if "after_update" in got:
            out.extend(_snapshot_diffs(f"{where} after update()", want, got["after_update"]))
    if "outputs" in case.end and trace.get("outputs") != case.end["outputs"]:
        out.append(f"{case.name}: final outputs are {trace.get('outputs')}, the card says {case.end['outputs']}")
    final = steps[-1].get("after_update", {}) if steps else {}
    if "num_preemptions" in case.end and final.get("num_preemptions") is not None and \
            final["num_preemptions"] != case.end["num_preemptions"]:
        out.append(f"{case.name}: num_preemptions is {final['num_preemptions']}, "
                   f"the card says {case.end['num_preemptions']}")
    return out
