"""`schedcheck prove`: the results files, the doc generated from them, and the model checker on spec.rules.

Faults that make claims fail are in test_inject.py; the encoding against the spec in test_encoding.py.
"""

import argparse
import json

import pytest

import spec.rules
from spec import faults
from spec.bounded import cli, doc
from spec.bounded.encode import Bounds
from spec.bounded.modelcheck import Scope, explore
from spec.model import Config


def parse(*argv):
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    return p.parse_args(argv)


def test_the_doc_tables_are_generated_from_the_results_files():
    expected = doc.expected_blocks()
    assert expected, "no results file in spec/bounded/"
    assert doc.blocks_in(doc.DOC.read_text()) == expected, "docs/proofs.md is stale: run python -m spec.bounded.doc"


def test_the_doc_check_can_fail():
    text = doc.DOC.read_text()
    name, block = "results-quick.json", doc.expected_blocks()["results-quick.json"]
    first_row = block.splitlines()[2]
    stale = text.replace(first_row, first_row.replace("| proved |", "| unknown |").replace("| agree |", "| x |"), 1)
    assert stale != text and doc.blocks_in(stale)[name] != block
    assert doc.render(stale) == doc.render(text)


def test_stored_results_say_which_rows_rest_on_the_induction():
    for name in doc.RESULTS:
        path = cli.HERE / name
        if not path.exists():
            continue
        rows = json.loads(path.read_text())["rows"]
        for r in rows:
            assert r["verdict"] in ("proved", "agree", "unknown", "counterexample"), r
            if r["kind"] == "bmc":
                assert "lemmas" in r, f"{name}: a BMC row must say whether it assumed Inv: {r['claim']}"


def test_model_checker_reports_a_shortest_trace_to_a_planted_violation():
    scope = Scope(Config(3, 2, 3, 4), ((2, 3), (2, 3)))
    r = explore(scope, faults.load("preempt_clears_output"))
    assert r.violation is not None and r.claim in ("I3", "I4", "OUT")
    assert 1 <= len(r.trace) <= r.depth
    clean = explore(scope, spec.rules)
    assert clean.violation is None and clean.distinct > 10


def test_results_file_keeps_other_bounds_and_partial_runs_replace_only_their_rows(tmp_path):
    path = tmp_path / "results.json"
    small, big = Bounds(slots=2, steps=2), Bounds(slots=3, steps=5)

    def row(claim, kind, verdict, b=None, lemmas=False):
        out = {"claim": claim, "kind": kind, "verdict": verdict, "seconds": 1.0}
        return out | ({"bounds": {"slots": b.slots, "steps": b.steps}, "lemmas": lemmas} if b else {})
    cli.store(path, [row("unwind", "bmc", "proved", small), row("I1", "bmc", "proved", small),
                     row("I1", "induction", "proved")], small)
    cli.store(path, [row("I1", "bmc", "unknown", big)], big, partial=True)
    cli.store(path, [row("I1", "bmc", "proved", big, lemmas=True)], big, partial=True)
    rows = json.loads(path.read_text())["rows"]
    assert [(r["claim"], r["kind"], r["verdict"], r.get("bounds", {}).get("steps"), r.get("lemmas")) for r in rows] == [
        ("unwind", "bmc", "proved", 2, False), ("I1", "bmc", "proved", 2, False), ("I1", "bmc", "unknown", 5, False),
        ("I1", "bmc", "proved", 5, True), ("I1", "induction", "proved", None, None)]


@pytest.mark.slow
def test_quick_run_is_green_and_matches_the_stored_results(capsys):
    stored = json.loads((cli.HERE / "results-quick.json").read_text())
    assert cli.main(parse("--quick")) == 0
    out = capsys.readouterr().out
    for row in stored["rows"]:
        assert any(line.startswith(f"{row['claim']:<24} {row['kind']:<10}") and row["verdict"] in line
                   for line in out.splitlines()), row
