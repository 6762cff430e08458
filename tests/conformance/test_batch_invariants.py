"""In black box the invariants check judges what a batch shows: I2 (its tokens within the budget) and I6 (at most
max_num_seqs sequences in it, every scheduled sequence being running); a conforming scheduler passes it."""

from pathlib import Path

import pytest

from conformance.checks.whitebox import batch_invariants
from conformance.profiles import Profile
from conformance.suite import run
from spec.model import Config
from spec.trace import Request, make_workload

MUTANTS = Path(__file__).resolve().parents[2] / "conformance" / "mutants"
TINY = Profile("tiny", None, 3, 2, 5)


@pytest.mark.long
@pytest.mark.parametrize("name, rule", [("budget_not_shared", "I2"), ("decode_not_charged", "I2"),
                                        ("max_num_seqs_off_by_one", "I6")])
def test_a_black_box_run_still_catches_what_the_batches_show(name, rule):
    report = run(str(MUTANTS / f"{name}.py"), TINY, white_box=False)
    inv = report.checks["invariants"]
    assert inv.status == "fail" and inv.counterexample.finding.rule == rule, report.summary()
    assert "batch " in report.summary() and not report.white_box


def test_a_conforming_scheduler_passes_the_batch_invariants():
    report = run("impl", TINY, white_box=False)
    assert report.checks["invariants"].status == "pass" and report.checks["invariants"].runs > 800


def observed(*batches):
    return {"white_box": False, "steps": [{"step": k, "added": [], "schedule": [list(p) for p in b]}
                                          for k, b in enumerate(batches, start=1)]}


def test_the_budget_and_the_batch_size_are_what_is_judged():
    w = make_workload(Config(num_blocks=8, block_size=2, max_num_seqs=2, max_num_batched_tokens=4),
                      [Request("a1", 3, 2), Request("a2", 3, 2), Request("a3", 1, 1)])
    assert batch_invariants(w, observed([("a1", 3), ("a2", 1)], [("a1", 1), ("a2", 1)])) == []
    over = batch_invariants(w, observed([("a1", 3)], [("a1", 3), ("a2", 2)]))
    assert [(f.rule, f.step, f.expected, f.actual) for f in over] == [("I2", 2, 4, 5)]
    many = batch_invariants(w, observed([("a1", 1), ("a2", 1), ("a3", 1)]))
    assert [(f.rule, f.step, f.expected, f.actual) for f in many] == [("I6", 1, 2, 3)]
