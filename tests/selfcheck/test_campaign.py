"""The campaign: a planted, non-equivalent mutant is killed; the differential tells equal from different."""

import random
from pathlib import Path

import pytest

from conformance.selfcheck import differential
from conformance.selfcheck.campaign import Outcome, check_one, run_child, select, table
from conformance.selfcheck.mutate import Mutant, mutants

STYLES = Path(__file__).resolve().parents[2] / "conformance" / "selfcheck" / "styles"
# The card's pitfall "preempted to the tail": RunningPhase.preempt appends the victim instead of appendleft.
TAIL_MUTANT = "class_per_phase.py:93:8:deque_end_append"


def tail_mutant() -> Mutant:
    path = STYLES / "class_per_phase.py"
    found = {m.mutant_id: m for m in mutants(path.read_text(), path.name)}
    assert TAIL_MUTANT in found, f"{TAIL_MUTANT} is gone; pick the appendleft->append mutant of preempt() again"
    assert "o.waiting.appendleft(victim)" in found[TAIL_MUTANT].description
    return found[TAIL_MUTANT]


@pytest.mark.long
def test_preempted_to_tail_mutant_is_killed(tmp_path: Path) -> None:
    outcome = check_one("class_per_phase", tail_mutant(), "quick", tmp_path, timeout=120.0)
    assert outcome.status == "killed", outcome
    assert "differential" in outcome.failed_checks


def test_differential_sees_the_tail_mutant_and_not_the_original(tmp_path: Path) -> None:
    src = tmp_path / "tail.py"
    src.write_text(tail_mutant().source)
    original = STYLES / "class_per_phase.py"
    same = differential.compare(original, original, runs=300, seed=1)
    assert same == {"identical": True, "runs": 300}
    differs = differential.compare(original, src, runs=3000, seed=1)
    assert differs["identical"] is False
    small = differential.Workload(**{k: tuple(map(tuple, v)) if k == "arrivals" else v
                                     for k, v in differs["workload_fields"].items()})
    assert differential.is_feasible(small) and len(small.arrivals) <= 3


def test_random_workloads_are_feasible_and_reproducible() -> None:
    a = [differential.draw(random.Random(5)) for _ in range(3)]
    b = [differential.draw(random.Random(5)) for _ in range(3)]
    assert a == b
    rng = random.Random(9)
    assert all(differential.is_feasible(differential.draw(rng)) for _ in range(500))


def test_sample_is_deterministic_and_balanced() -> None:
    pool = [(style, Mutant(f"{style}.py:{k}:0:cmp", "cmp", "d", k, "")) for style in ("a", "b", "c") for k in range(9)]
    picked = select(pool, 6)
    assert picked == select(list(pool), 6)
    assert sorted(style for style, _ in picked) == ["a", "a", "b", "b", "c", "c"]
    assert select(pool, None) == pool


@pytest.mark.long
def test_a_hanging_child_costs_only_its_timeout(tmp_path: Path) -> None:
    hang = tmp_path / "hang.py"
    hang.write_text("while True:\n    pass\n")
    code, seconds, note = run_child(["check", str(hang), "--profile", "quick", "--json", str(tmp_path / "o.json")],
                                    timeout=3.0, cwd=tmp_path)
    assert code is None and seconds >= 3.0 and "timeout" in note  # stopped by the timeout, not by itself


def test_table_counts_equivalents_out_of_the_denominator() -> None:
    rows = [Outcome("x:1:0:cmp", "s", "cmp", "d", "killed", 1, ["golden"], 1.0),
            Outcome("x:2:0:cmp", "s", "cmp", "d", "survived", 0, [], 1.0, triage={"verdict": "equivalent"}),
            Outcome("x:3:0:cmp", "s", "cmp", "d", "survived", 0, [], 1.0, triage={"verdict": "missed"})]
    text = table(rows)
    assert " 50.0%" in text.splitlines()[-1] and " 33.3%" in text.splitlines()[-1]


def test_redo_checks_again_only_the_chosen_statuses_and_keeps_the_rest(tmp_path: Path) -> None:
    from dataclasses import asdict

    from conformance.selfcheck.campaign import _redo, collect

    one = tmp_path / "styles"
    one.mkdir()
    (one / "class_per_phase.py").write_text((STYLES / "class_per_phase.py").read_text())
    everything = collect(one)
    ids = [m.mutant_id for _, m in everything[:3]]
    before = [Outcome(i, i.split(".")[0], "op", "d", status, 1, [], 1.0)
              for i, status in zip(ids, ("killed", "error", "survived"), strict=True)]
    previous = tmp_path / "quick.json"
    previous.write_text(__import__("json").dumps({"profile": "quick", "limit": 3,
                                                  "outcomes": [asdict(o) for o in before]}))
    again, kept, limit = _redo(everything, previous, {"error"}, "quick")
    assert [m.mutant_id for _, m in again] == [ids[1]]
    assert [o.mutant_id for o in kept] == [ids[0], ids[2]] and limit == 3
    try:
        _redo(everything, previous, {"error"}, "default")
    except SystemExit as e:
        assert "measured with --profile quick" in str(e)
    else:
        raise AssertionError("a result of another profile was accepted")
