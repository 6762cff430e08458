"""Held-out cases: drawn from a secret seed, the same for the same seed, and an item scores the lower of its rates.

The end-to-end case (a module that replays recorded corpus answers and has no scheduler) is
tests/grading/attacks/submissions/read_replay_corpus.py, graded in the slow attack class run.
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace

import pytest

from conformance.checks.checkers import Finding
from conformance.grading import heldout
from conformance.grading.observe import HELD_OUT, Case
from conformance.grading.rubric import load_rubric
from conformance.grading.scoring import score_item
from conformance.sandbox.types import WorkloadResult
from spec.model import Config
from spec.trace import Request, make_workload, run_workload


def test_the_same_seed_draws_the_same_cases_and_another_seed_others():
    a, b, c = heldout.held_out_cases(1, 30), heldout.held_out_cases.__wrapped__(1, 30), heldout.held_out_cases(2, 30)
    assert a == b and len(a) == 30
    assert {x.workload for x in a} != {x.workload for x in c}
    for case in a:
        assert case.vector_id.startswith(f"{HELD_OUT}/") and HELD_OUT in case.tags
        run_workload(case.workload)  # every one is feasible: the spec runs it to the end


def test_the_seed_comes_from_the_environment_else_a_private_file_made_once(tmp_path, monkeypatch):
    monkeypatch.setenv(heldout.SEED_ENV, "42")
    assert heldout.held_out_seed(tmp_path / "seed") == (42, f"${heldout.SEED_ENV}")
    monkeypatch.delenv(heldout.SEED_ENV)
    first = heldout.held_out_seed(tmp_path / "dir" / "seed")
    assert first == heldout.held_out_seed(tmp_path / "dir" / "seed") and first[0] > 0
    assert stat.S_IMODE(os.stat(tmp_path / "dir" / "seed").st_mode) == 0o600
    (tmp_path / "bad").write_text("not a number\n")
    with pytest.raises(heldout.SeedError, match="must be a decimal integer.*bad"):
        heldout.held_out_seed(tmp_path / "bad")


def _case(name: str, held: bool) -> Case:
    w = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 1)])
    return Case(name, w, ((HELD_OUT,) if held else ()) + ("chunked-prefill",))


def test_an_item_scores_the_lower_of_its_public_and_held_out_pass_rates():
    rubric = load_rubric()
    item = replace(rubric.items[0], features=("chunked-prefill",), checks=("differential",))
    public = [_case(f"p{i}", False) for i in range(4)]
    held = [_case(f"h{i}", True) for i in range(4)]
    bad = Finding("differential", "P2", 1, "schedule", "wrong")

    def score(public_failing: int, held_failing: int) -> float:
        cases = tuple(public + held)
        verdicts = [{"differential": bad if (i < public_failing or 4 <= i < 4 + held_failing) else None}
                    for i in range(8)]
        results = tuple(WorkloadResult(i, c.vector_id, "ok", "") for i, c in enumerate(cases))
        observed = [{"steps": []} for _ in cases]
        return score_item(item, rubric, cases, verdicts, results, observed).score

    points = item.points
    assert score(0, 0) == points
    assert score(0, 4) == 0  # every public case right, every unseen one wrong: a recording
    assert score(1, 0) == points * 3 / 4 and score(0, 2) == points / 2 and score(2, 1) == points / 2
