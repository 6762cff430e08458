"""`schedcheck prove`: the quick table equals the stored results; injected card bugs give counterexamples."""

import argparse
import json
from pathlib import Path

import pytest

from spec.bounded import checks, cli, variants
from spec.bounded.encode import Bounds
from spec.bounded.modelcheck import Scope, explore
from spec.bounded.replay import violations
from spec.model import Config

RESULTS = Path(cli.__file__).parent / "results-quick.json"
CARD_BUGS = ["blocks_by_num_tokens", "preempt_keeps_num_computed", "preempt_clears_output", "preempt_to_tail",
             "sample_during_prefill", "phase2_continue", "eos_before_append"]
SMALL = Bounds(slots=2, steps=3, num_blocks=6, budget=6, max_num_seqs=2, prompt_len=6, max_tokens=3)


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


@pytest.mark.parametrize(("bug", "claim", "slots"), [
    ("blocks_by_num_tokens", "I1", 2), ("preempt_keeps_num_computed", "I3", 2), ("preempt_clears_output", "I4", 2),
    ("preempt_to_tail", "I5", 3), ("sample_during_prefill", "I3", 2), ("phase2_continue", "I5", 3),
    ("eos_before_append", "I3", 2)])
def test_injected_card_bug_yields_a_replayable_counterexample(bug, claim, slots):
    assert bug in CARD_BUGS
    r = checks.check(claim, Bounds(**{**{f: getattr(SMALL, f) for f in Bounds.__slots__}, "slots": slots}), bug,
                     timeout=120)
    assert r.verdict == "counterexample" and r.workload is not None
    assert violations(claim, r.workload, bug, SMALL.steps), f"{claim} under {bug} does not replay"
    assert not violations(claim, r.workload, None, SMALL.steps), "the spec itself shows the violation"


def test_not_expressible_bugs_are_explained():
    assert set(variants.NOT_EXPRESSIBLE).isdisjoint(variants.EXPRESSIBLE)
    assert cli.main(parse("--quick", "--inject", "batch_not_copied")) == 1


def test_model_checker_reports_a_shortest_trace_to_a_planted_violation():
    r = explore(Scope(Config(3, 2, 3, 4), ((2, 3), (2, 3))), "preempt_clears_output")
    assert r.violation is not None and "I" in r.violation
    assert 1 <= len(r.trace) <= r.depth
    clean = explore(Scope(Config(3, 2, 3, 4), ((2, 3), (2, 3))))
    assert clean.violation is None and clean.distinct > 10


def test_model_checker_finds_a_deadlock():
    r = explore(Scope(Config(1, 1, 1, 1), ((1, 1),)), "capacity_off_by_one")
    assert r.violation is not None and "deadlock" in r.violation
