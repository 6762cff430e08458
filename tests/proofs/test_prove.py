"""`schedcheck prove`: the quick table equals the stored results; the model checker finds planted bugs.

Injected bugs (`prove --inject`) are tested in test_inject.py.
"""

import argparse
import json
from pathlib import Path

from spec.bounded import cli
from spec.bounded.encode import Bounds
from spec.bounded.modelcheck import Scope, explore
from spec.model import Config

RESULTS = Path(cli.__file__).parent / "results-quick.json"


def parse(*argv):
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    return p.parse_args(argv)


def test_quick_table_matches_the_stored_results(capsys):
    stored = json.loads(RESULTS.read_text())
    assert cli.main(parse("--quick")) == 0
    out = capsys.readouterr().out
    for row in stored["rows"]:
        line = next(x for x in out.splitlines() if x.startswith(f"{row['claim']:<22} {row['kind']:<10}"))
        assert row["verdict"] in line
    assert all(r["verdict"] == "proved" for r in stored["rows"])


def test_model_checker_reports_a_shortest_trace_to_a_planted_violation():
    r = explore(Scope(Config(3, 2, 3, 4), ((2, 3), (2, 3))), "preempt_clears_output")
    assert r.violation is not None and "I" in r.violation
    assert 1 <= len(r.trace) <= r.depth
    clean = explore(Scope(Config(3, 2, 3, 4), ((2, 3), (2, 3))))
    assert clean.violation is None and clean.distinct > 10


def test_model_checker_finds_a_deadlock():
    r = explore(Scope(Config(1, 1, 1, 1), ((1, 1),)), "capacity_off_by_one")
    assert r.violation is not None and "deadlock" in r.violation


def test_results_file_keeps_other_bounds_and_partial_runs_replace_only_their_rows(tmp_path):
    path = tmp_path / "results.json"
    small, big = Bounds(slots=2, steps=2), Bounds(slots=3, steps=5)

    def row(claim, kind, verdict, b=None):
        out = {"claim": claim, "kind": kind, "verdict": verdict, "seconds": 1.0}
        return out | ({"bounds": {"slots": b.slots, "steps": b.steps}} if b else {})
    cli.store(path, [row("unwind", "bmc", "proved", small), row("I1", "bmc", "proved", small),
                     row("I1", "induction", "proved")], small)
    cli.store(path, [row("I1", "bmc", "unknown", big)], big, partial=True)
    cli.store(path, [row("unwind", "bmc", "proved", big)], big, partial=True)
    rows = json.loads(path.read_text())["rows"]
    assert [(r["claim"], r["kind"], r["verdict"], r.get("bounds", {}).get("steps")) for r in rows] == [
        ("unwind", "bmc", "proved", 2), ("I1", "bmc", "proved", 2), ("unwind", "bmc", "proved", 5),
        ("I1", "bmc", "unknown", 5), ("I1", "induction", "proved", None)]
    assert json.loads(path.read_text())["bounds"]["steps"] == 2
    cli.store(path, [row("I1", "bmc", "counterexample", small), row("I1", "induction", "unknown")], small)
    rows = json.loads(path.read_text())["rows"]
    assert [(r["claim"], r["verdict"], r.get("bounds", {}).get("steps")) for r in rows] == [
        ("I1", "counterexample", 2), ("unwind", "proved", 5), ("I1", "unknown", 5), ("I1", "unknown", None)]
