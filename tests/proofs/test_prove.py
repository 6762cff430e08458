"""`schedcheck prove`: the results files, the doc generated from them, and the model checker on spec.rules.

Faults that make claims fail are in test_inject.py; the encoding against the spec in test_encoding.py.
"""

import argparse
import json

import pytest

import spec.rules
from spec import faults
from spec.bounded import checks, cli, doc, results
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


@pytest.mark.parametrize("name", doc.RESULTS)
def test_the_doc_check_can_fail(name):
    """A verdict or a number of either table changed by hand makes the doc and the results disagree."""
    text = doc.DOC.read_text()
    block = doc.expected_blocks()[name]
    rows = [line for line in block.splitlines() if line.startswith("| ") and not line.startswith("| claim")]
    assert rows, f"no table for {name}"
    first_row = rows[0]
    cells = first_row.split(" | ")
    other = "unknown" if cells[-2] in ("proved", "agree") else "proved"
    for edit in (" | ".join(cells[:-2] + [other, cells[-1]]),  # the verdict
                 " | ".join(cells[:-1] + ["0.01 |"])):  # the seconds
        assert edit != first_row
        at = text.index(doc.BEGIN.format(name=name))  # this table's row (another table may have an equal one)
        stale = text[:at] + text[at:].replace(first_row, edit, 1)
        assert stale != text and doc.blocks_in(stale)[name] != block
        assert doc.render(stale) == doc.render(text)


def test_the_full_results_have_a_lemma_free_row_for_every_claim_at_the_issue_bound():
    """results.json: lemma-free BMC of every claim at N=3, K=10 (each proved, or unknown with the steps it
    proved), the induction at N >= 4 and the model check of spec.rules with three requests."""
    results = json.loads((cli.HERE / "results.json").read_text())
    rows = results["rows"]
    bmc = {r["claim"]: r for r in rows if r["kind"] == "bmc" and not r["lemmas"]
           and (r["bounds"]["slots"], r["bounds"]["steps"]) == (3, 10)}
    assert set(bmc) == {c.name for c in checks.CLAIMS}
    for r in bmc.values():
        assert r["verdict"] in ("proved", "unknown"), r
        if r["verdict"] == "unknown":
            assert 0 <= r["steps_proved"] < 10 and len(r["step_seconds"]) == r["steps_proved"] + 1, r
    induction = {r["claim"]: r for r in rows if r["kind"] == "induction"}
    assert set(induction) >= set(checks_induction_claims()) and all(r["slots"] >= 4 for r in induction.values())
    assert any(r["kind"] == "modelcheck" and r["bounds"]["requests"] == 3 and r["distinct_states"] > 0 for r in rows)
    assert any(r["kind"] == "validation" and r["verdict"] == "agree" for r in rows)


def checks_induction_claims():
    from spec.bounded.induction import STEP_CLAIMS
    return ("Inv initial", *STEP_CLAIMS)


def test_the_full_run_is_the_default_and_uses_the_issue_bound():
    args = parse()
    assert cli._bounds(args) == cli.FULL and (cli.FULL.slots, cli.FULL.steps) == (3, 10)
    assert not args.lemmas and cli.FULL_INDUCTION_SLOTS >= 4


def test_a_claim_out_of_time_is_unknown_and_says_what_it_proved():
    r = checks.check("I5", Bounds(slots=2, steps=3), timeout=60, total=0.0)
    assert (r.verdict, r.steps_proved, r.step) == ("unknown", 0, 1)
    assert "unknown at K=3: no step proved" in doc._verdict({"kind": "bmc", **r.to_json()})
    r = checks.check("I5", Bounds(slots=2, steps=2), timeout=60, total=60)
    assert r.verdict == "proved" and len(r.step_seconds or ()) == 2


def test_a_stopped_run_is_marked_partial_in_the_doc(tmp_path):
    path = tmp_path / "results.json"
    row = {"claim": "I1", "kind": "induction", "slots": 4, "verdict": "proved", "seconds": 1.0}
    results.store(path, [row], Bounds(), complete=False, wall=3.0)
    assert doc.table(json.loads(path.read_text())).startswith("**Partial run")
    results.store(path, [row], Bounds(), complete=True, wall=3.0)
    text = doc.table(json.loads(path.read_text()))
    assert not text.startswith("**Partial") and "3.0 s of wall time" in text


def test_stored_results_say_which_rows_rest_on_the_induction():
    for name in doc.RESULTS:
        path = cli.HERE / name
        if not path.exists():
            continue
        rows = json.loads(path.read_text())["rows"]
        for r in rows:
            assert r["verdict"] in ("proved", "agree", "reached", "unknown", "counterexample"), r
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
    results.store(path, [row("unwind", "bmc", "proved", small), row("I1", "bmc", "proved", small),
                     row("I1", "induction", "proved")], small)
    results.store(path, [row("I1", "bmc", "unknown", big)], big, partial=True)
    results.store(path, [row("I1", "bmc", "proved", big, lemmas=True)], big, partial=True)
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


@pytest.mark.parametrize("name", ["results-quick.json", "results-vllm-v1-quick.json"])
def test_the_quick_results_meet_every_quota_reach_every_kind_and_every_scope(name):
    """The stored quick runs: the validation met its quotas at block sizes 1..4 and raised every flag from drawn
    states, every premise reached every kind the bound has, and each model-check scope reached what it asks
    (block sizes 3 and 4, three preemptions in a run; under p07 three of one sequence)."""
    rows = json.loads((cli.HERE / name).read_text())["rows"]
    v = next(r for r in rows if r["kind"] == "validation")
    assert v["verdict"] == "agree" and v["quotas"]["short"] == [] and v["states"]["short"] == []
    assert v["quotas"]["block_sizes"] == [1, 2, 3, 4]
    assert next(r for r in rows if r["kind"] == "reach")["verdict"] == "reached"
    mc = [r for r in rows if r["kind"] == "modelcheck"]
    assert all(r["verdict"] == "proved" and not r["unreached"] for r in mc)
    assert max(r["bounds"]["block_size"][1] if isinstance(r["bounds"]["block_size"], list)
               else r["bounds"]["block_size"] for r in mc) == 4
    assert max(r["most_preemptions"] for r in mc) >= 3
    assert name != "results-quick.json" or max(r["most_preempted"] for r in mc) >= 3


def test_a_scope_that_does_not_reach_what_it_asks_fails_its_row():
    tiny = dict(num_blocks=1, block_size=1, budget=1, max_num_seqs=1, requests=1, prompt_len=1, max_tokens=1,
                reach=dict(most_preemptions=1))
    row = cli.model_check_rows((tiny,))[0]
    assert row["verdict"] == "unreached" and row["unreached"] == ["most_preemptions 0 < 1"]


@pytest.mark.long
def test_a_validation_that_misses_a_quota_fails_its_row(monkeypatch):
    monkeypatch.setattr(cli.validate.quotas, "ATTEMPTS", 0)
    row = cli.validation_row(5, solver=0)
    assert row["verdict"] == "quota unmet" and "victims at block_size 4" in row["quotas"]["short"]


def test_the_full_results_prove_out_by_relational_induction_that_fails_with_output_cleared():
    rows = json.loads((cli.HERE / "results.json").read_text())["rows"]
    out = [r for r in rows if r["claim"] == "OUT" and r["kind"] == "induction" and r.get("relational")]
    assert len(out) == 1, "no relational induction row for OUT: run schedcheck prove --relational --write-results"
    r = out[0]
    assert r["slots"] >= 4 and r["block_sizes"] == [1, 2, 3, 4] and r["initial"] is True
    assert r["verdict"] == "proved" and r["block_sizes_proved"] == [1, 2, 3, 4]
    assert r["fault_check"]["fault"] == "preempt_clears_output" and r["fault_check"]["verdict"] == "counterexample"


def test_the_full_results_have_n4_bmc_rows_for_the_invariants_with_the_k_reached():
    rows = json.loads((cli.HERE / "results.json").read_text())["rows"]
    n4 = {r["claim"]: r for r in rows if r["kind"] == "bmc" and r["bounds"]["slots"] == 4 and not r["lemmas"]}
    assert set(n4) == set(cli.FULL4_CLAIMS)
    for r in n4.values():
        assert r["verdict"] in ("proved", "unknown"), r
        if r["verdict"] == "unknown":
            assert len(r["step_seconds"]) == r["steps_proved"] + 1, r


def test_relational_row_is_unknown_when_the_fault_check_cannot_fail(monkeypatch):
    """A proof that also holds on the bug it is about proves nothing: the row must not say proved."""
    from spec.bounded import relational
    monkeypatch.setattr(relational, "prove_out", lambda *a, **k: relational.Verdict("proved", 0.0, (1, 2, 3, 4)))
    assert cli.relational_row(2, 1.0)["verdict"] == "unknown"
