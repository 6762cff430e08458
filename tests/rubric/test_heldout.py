"""Held-out cases: drawn from a secret seed, the same for the same seed, and an item scores the lower of its rates.

The end-to-end case (a module that replays recorded corpus answers and has no scheduler) is
tests/grading/attacks/submissions/read_replay_corpus.py, graded in the slow attack class run.
"""

from __future__ import annotations

import os
import random
import stat
from dataclasses import replace

import pytest

from conformance.checks.checkers import Finding
from conformance.grading import heldout
from conformance.grading.observe import HELD_OUT, Case
from conformance.grading.rubric import load_rubric
from conformance.grading.scoring import held_out_notes as heldout_notes
from conformance.grading.scoring import score_item
from conformance.sandbox.types import SandboxResult, WorkloadResult
from conformance.workloads.corpus import features
from spec.model import Config
from spec.trace import Request, make_workload, run_workload


def test_the_same_key_draws_the_same_cases_and_another_key_others():
    a, b, c = heldout.held_out_cases(1, 30), heldout.held_out_cases.__wrapped__(1, 30), heldout.held_out_cases(2, 30)
    assert a == b and len(a) == 30
    assert {x.workload for x in a} != {x.workload for x in c}
    for case in a:
        assert case.vector_id.startswith(f"{HELD_OUT}/") and HELD_OUT in case.tags
        assert case.workload.name == "" and case.workload.tags == ()  # nothing in the run to recognise it by
        run_workload(case.workload)  # every one is feasible: the spec runs it to the end


def test_a_submission_s_cases_are_drawn_from_its_bytes_so_one_byte_changes_them(tmp_path):
    """Cases one submission saw and carried out are no cases of another: its key is an HMAC of its bytes."""
    module = tmp_path / "p07_scheduler.py"
    module.write_bytes(b"class Scheduler: pass\n")
    key = heldout.submission_key(99, heldout.submission_bytes(module))
    assert key == heldout.submission_key(99, heldout.submission_bytes(module))
    module.write_bytes(b"class Scheduler: pass \n")
    assert heldout.submission_key(99, heldout.submission_bytes(module)) != key
    assert heldout.submission_key(98, b"x") != heldout.submission_key(99, b"x")  # and of the secret
    folder = tmp_path / "wire"
    folder.mkdir()
    (folder / "wire.toml").write_text('command = ["./prog"]\n')
    (folder / "prog").write_text("one\n")
    first = heldout.submission_bytes(folder)
    (folder / "prog").write_text("two\n")
    assert heldout.submission_bytes(folder) != first  # a wire folder: every file counts
    drawn = [{c.workload for c in heldout.held_out_cases(heldout.submission_key(99, b), 20)} for b in (b"a", b"b")]
    assert not drawn[0] & drawn[1]


def test_every_held_out_case_is_a_sibling_of_a_public_vector_with_its_features_and_none_is_public():
    public = {heldout.content(v.workload): v for v in heldout.public_vectors()}
    tagged = {v.workload.tags or features(v.workload) for v in heldout.public_vectors()}
    for case in heldout.held_out_cases(3, 60):
        assert heldout.content(case.workload) not in public
        assert case.tags[0] == HELD_OUT and case.tags[1:] in tagged  # items cover it as they cover its sibling
    rng = random.Random(1)
    for v in heldout.public_vectors()[::50]:
        near = heldout.sibling(v.workload, rng)
        assert near is not None and features(near) == features(v.workload)
        moved = sum(a != b for a, b in zip(near.requests, v.workload.requests, strict=True)) + \
            (near.config != v.workload.config) + (near.sample != v.workload.sample)
        assert 1 <= moved <= 3 * len(v.workload.requests)


def test_a_large_value_only_moves_toward_zero_so_held_out_cases_stay_in_the_corpus_ranges():
    rng = random.Random(0)
    for value in (2**31, 2**53 + 5, 2**64 - 1, -(2**63)):
        moved = [heldout.step(value, 1 << 10, rng) for _ in range(200)]
        assert all(abs(m) < abs(value) for m in moved)
    assert {heldout.step(5, 1, rng) for _ in range(100)} == {4, 6}


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
        return score_item(item, rubric, cases, verdicts, [{}] * len(cases), results, observed).score

    points = item.points
    assert score(0, 0) == points
    assert score(0, 4) == 0  # every public case right, every unseen one wrong: a recording
    assert score(1, 0) == points * 3 / 4 and score(0, 2) == points / 2 and score(2, 1) == points / 2


def test_a_held_out_case_s_text_never_reaches_the_student():
    """A failing held-out case is counted, never shown: its message is text the submission wrote, and it could
    carry what the submission saw of its cases. The smallest shown case is a public one."""
    rubric = load_rubric()
    item = replace(rubric.items[0], features=("chunked-prefill",), checks=("differential",))
    cases = (_case("p0", False), _case("h0", True), _case("h1", True))
    verdicts = [{"differential": Finding("differential", "P2", 1, "schedule", words)}
                for words in ("public words", "SECRET-h0", "SECRET-h1")]
    results = tuple(WorkloadResult(i, c.vector_id, "ok", "") for i, c in enumerate(cases))
    observed = [{"steps": [], "error": None, "stop": "done", "outputs": {}} for _ in cases]
    out = score_item(item, rubric, cases, verdicts, [{}] * len(cases), results, observed).output
    assert "SECRET" not in out and "public words" in out and "2 held-out cases" in out
    only_held = score_item(item, rubric, cases[1:], verdicts[1:], [{}] * (len(cases) - 1), results[1:],
                           observed[1:]).output
    assert "SECRET" not in only_held and "Only held-out cases fail" in only_held
    crashed = WorkloadResult(0, "", "exception", "exception: SECRET-cause")
    result = SandboxResult(None, (crashed,), None, "", "", False, False, 0, (), 1, 0, 0.0)  # type: ignore[arg-type]
    notes = heldout_notes([result])
    assert notes == ["1 of the 1 held-out runs crashed"]


def test_docs_state_the_bounds_the_code_has():
    from pathlib import Path

    from conformance.grading.escape import TEXT_LIMIT
    from conformance.grading.scoring import LISTED_CASES
    from tests.grading.test_held_out import HELD

    text = " ".join((Path(__file__).resolve().parents[2] / "docs" / "grading.md").read_text().split())
    assert f"at most {LISTED_CASES} failing-case lines of at most {TEXT_LIMIT} characters" in text
    assert f"on {HELD} held-out cases" in text and "up to 1,024" in text
    assert f"past 2^{heldout.LARGE.bit_length() - 1} only toward zero" in text
