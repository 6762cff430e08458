"""The shipped coverage cases: each loads and its spec run exercises its rule id; together they cover every rule."""

import argparse
from dataclasses import replace

import pytest

from conformance.workloads.corpus import load_corpus
from spec.bounded import cli, coverage
from spec.bounded.coverage import OUT_DIR, TARGETS, search_scope, steps_used
from spec.trace import load_workload, make_workload, run_workload

EXPECTED = {"P1", "P1.preempt", "P1.skip_self", "P2", "P2.stop", "P2.full", "U.partial", "U.sample", "U.finish"}
BY_NAME = {t.name: t for t in TARGETS}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_each_case_loads_and_exercises_its_rule(name):
    w = load_workload(OUT_DIR / f"{name}.json")
    target = BY_NAME[name]
    assert w.name == name and w.tags == ("coverage", target.rule)
    steps = run_workload(w).steps
    assert target.check(steps)
    assert target.rule in {e.rule for s in steps for e in s.events}


def test_the_cases_cover_every_rule_and_nothing_else_ships():
    vectors, notes = load_corpus(families=["coverage"])
    assert notes == []
    assert {v.name for v in vectors} == set(BY_NAME)
    assert {v.workload.tags[1] for v in vectors} == EXPECTED
    reasons = {dict(e.data).get("reason") for v in vectors for s in run_workload(v.workload).steps
               for e in s.events if e.rule == "U.finish"}
    assert reasons == {"eos", "max_tokens"}


def test_a_case_that_misses_its_rule_is_caught():
    """The check can fail: without its eos the eos case finishes by max_tokens only."""
    w = load_workload(OUT_DIR / "U_finish_eos.json")
    plain = make_workload(w.config, w.requests, dict(w.sample.base), {}, w.name, w.tags)
    assert not BY_NAME["U_finish_eos"].check(run_workload(plain).steps)
    with pytest.raises(AssertionError, match="does not exercise"):
        steps_used(plain, BY_NAME["U_finish_eos"])


def test_the_solver_finds_the_smallest_p1_case_again():
    """The single-request scopes: one step cannot run a sequence already running; two steps can."""
    assert search_scope(BY_NAME["P1"], 1, 1) is None
    found = search_scope(BY_NAME["P1"], 1, 2)
    shipped = load_workload(OUT_DIR / "P1.json")
    assert found is not None and replace(found, tags=shipped.tags) == shipped


def test_prove_coverage_flag_runs_the_generator(monkeypatch):
    calls = []
    monkeypatch.setattr(coverage, "main", lambda argv: calls.append(argv) or 0)
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    assert cli.main(p.parse_args(["--coverage"])) == 0 and calls == [[]]
