"""`prove --inject BUG`: a counterexample the solver finds fails the mutant submission and passes the references."""

import argparse
import functools
import json
import random

import pytest

from conformance.adapters import load_target
from conformance.cli import replay as replay_cli
from conformance.drivers import run_workload
from spec.bounded import checks, cli, crossreplay, variants
from spec.bounded.encode import Bounds
from spec.bounded.replay import violations
from spec.invariants import check_step
from spec.model import Config
from spec.rules import peak_blocks
from spec.trace import Request, liveness_bound, load_workload, make_workload, workload_from_json, workload_to_json

CORPUS = crossreplay.mutant_path("x").parent.parent / "workloads" / "data"
CARD_BUGS = ["blocks_by_num_tokens", "preempt_keeps_num_computed", "preempt_clears_output", "preempt_to_tail",
             "sample_during_prefill", "phase2_continue", "eos_before_append"]
SMALL = Bounds(slots=2, steps=3, num_blocks=6, budget=6, max_num_seqs=2, prompt_len=6, max_tokens=3)
# (bug, a claim it breaks, slots): every expressible bug but no_admission_after_preemption, which breaks none
CASES = [
    ("blocks_by_num_tokens", "I1", 2), ("preempt_keeps_num_computed", "I3", 2), ("preempt_clears_output", "I4", 2),
    ("preempt_to_tail", "I5", 3), ("sample_during_prefill", "I3", 2), ("phase2_continue", "I5", 3),
    ("eos_before_append", "I3", 2), ("victim_first", "I2", 2), ("budget_not_shared", "I2", 2),
    ("max_num_seqs_off_by_one", "I6", 2), ("decode_not_charged", "FB", 2), ("reserve_whole_prompt", "I1", 2),
    ("capacity_off_by_one", "LIVE", 2), ("finish_keeps_blocks", "I1", 2), ("preempt_keeps_blocks_used", "I1", 2),
    ("max_tokens_off_by_one", "LIVE", 2), ("no_chunked_prefill", "LIVE", 2), ("grow_on_mod_one", "I1", 2)]
# A victim_first victim batched in phase 1 keeps its entry: the model's update() skips it (it is no longer
# running); the mutant's advances it in the waiting queue. The run has left the spec by then.
STALE_ENTRY = {"victim_first": "update() of a preempted victim's stale batch entry"}


def random_workloads(seed, count, slots=3, steps=10):
    """Feasible workloads in the proofs' ranges (block_size <= 4, num_blocks <= 8, budget <= 8, 2/3 eos-free)."""
    rng = random.Random(seed)
    while count:
        bs, n = rng.randint(1, 4), rng.randint(1, slots)
        reqs = sorted((Request("", rng.randint(1, 8), rng.randint(1, 4), rng.randint(1, steps // 2))
                       for _ in range(n)), key=lambda r: r.arrival)
        reqs = [Request(f"r{i}", r.prompt_len, r.max_tokens, r.arrival) for i, r in enumerate(reqs)]
        peak = max(peak_blocks(Config(1, bs, 1, 1), r.prompt_len, r.max_tokens) for r in reqs)
        if peak > 8:
            continue
        config = Config(rng.randint(peak, 8), bs, rng.randint(1, 3), rng.randint(1, 8), 0)
        eos = {r.seq_id: [k for k in range(r.max_tokens) if rng.random() < 0.1] for r in reqs}
        count -= 1
        yield make_workload(config, reqs, eos_at=eos)


@functools.cache
def counterexample(bug: str, claim: str, slots: int) -> dict:
    r = checks.check(claim, Bounds(**{**{f: getattr(SMALL, f) for f in Bounds.__slots__}, "slots": slots}), bug,
                     timeout=120)
    assert r.verdict == "counterexample" and r.workload is not None, f"{claim} does not break under {bug}"
    return r.workload


def parse(module, *argv):
    p = argparse.ArgumentParser()
    module.add_arguments(p)
    return p.parse_args(argv)


def test_cases_cover_every_expressible_bug():
    assert set(CARD_BUGS) <= {bug for bug, _, _ in CASES}
    assert {bug for bug, _, _ in CASES} == set(variants.EXPRESSIBLE) - {"no_admission_after_preemption"}


@pytest.mark.parametrize(("bug", "claim", "slots"), CASES)
def test_injected_bug_yields_a_counterexample_the_model_with_the_bug_replays(bug, claim, slots):
    w = counterexample(bug, claim, slots)
    assert violations(claim, w, bug, SMALL.steps), f"{claim} under {bug} does not replay"
    assert not violations(claim, w, None, SMALL.steps), "the spec itself shows the violation"


@pytest.mark.parametrize(("bug", "claim", "slots"), CASES)
def test_counterexample_fails_the_mutant_submission_and_passes_the_references(bug, claim, slots):
    w = counterexample(bug, claim, slots)
    for ref in crossreplay.REFERENCES + ("spec",):
        assert crossreplay.verdict(w, ref) == "pass", f"{ref} fails the {claim} counterexample of {bug}"
    assert crossreplay.verdict(w, bug).startswith("FAIL ["), f"mutants/{bug}.py passes the {claim} counterexample"


@pytest.mark.parametrize("bug", [pytest.param(b, marks=pytest.mark.xfail(strict=True, reason=STALE_ENTRY[b]))
                                 if b in STALE_ENTRY else b for b in variants.EXPRESSIBLE])
def test_variant_model_runs_like_the_mutant_submission(bug):
    """Step for step the same batches and finished lists on 200 workloads: so a counterexample the model with
    the bug reproduces is one the mutant runs into too."""
    factory = load_target(str(crossreplay.mutant_path(bug)))
    for w in random_workloads(7, 200):
        seen = run_workload(w, factory, white_box=False)
        assert seen["error"] is None, seen["error"]
        got = [(step["schedule"], step["finished"]) for step in seen["steps"]]
        model = variants.run(w, bug, max_steps=liveness_bound(w.requests))
        assert got == [([list(x) for x in s.batch], list(s.finished)) for s in model], w


def test_no_admission_after_preemption_only_delays_the_victim():
    """It breaks no claim: the victim is readmitted a step later, every invariant holds, and only the
    conformance suite's differential check (against the spec's batches) sees it."""
    w = load_workload(CORPUS / "counterexamples" / "no_admission_after_preemption.differential.json")
    bug = "no_admission_after_preemption"
    buggy, spec = variants.run(w, bug), variants.run(w)
    assert [s.batch for s in buggy] != [s.batch for s in spec] and len(buggy) == len(spec) + 1
    assert buggy[-1].after_update.finished == spec[-1].after_update.finished  # same outputs
    assert not [v for s in buggy for v in check_step(s.before, s.batch, s.after_schedule)
                + check_step(s.after_schedule, s.after_schedule.pending or (), s.after_update)]
    assert crossreplay.verdict(workload_to_json(w), bug) == "FAIL [P2] differential"


def test_victim_first_records_the_sequence_batched_twice_that_the_dict_hides():
    """The batch keeps dict semantics; the second entry is recorded beside it, as the encoding's I2 counts it."""
    w = counterexample("victim_first", "I2", 2)
    run = variants.run(workload_from_json(w), "victim_first", max_steps=SMALL.steps)
    step = next((s for s in run if s.batched_twice), None)
    assert step is not None, "no sequence is batched twice"
    assert len(dict(step.batch)) == len(step.batch), "the batch is a dict: one entry per sequence"
    assert not [v for v in check_step(step.before, step.batch, step.after_schedule) if v.invariant == "I2"]
    assert all(not s.batched_twice for s in variants.run(workload_from_json(w), None, max_steps=SMALL.steps))


def test_schedule_keeps_its_shape_for_the_model_checker():
    w = workload_from_json(counterexample("victim_first", "I2", 2))
    s = variants.run(w, "victim_first", max_steps=1)[0]
    assert variants.schedule(s.before, "victim_first") == (s.after_schedule, s.batch)


def test_cli_writes_a_counterexample_that_schedcheck_replay_catches_on_the_mutant(tmp_path, capsys):
    bug = "preempt_clears_output"
    assert cli.main(parse(cli, "--quick", "--inject", bug, "--only", "I4", "--cex-dir", str(tmp_path))) == 0
    out = capsys.readouterr().out
    assert "mutant: FAIL [" in out and "reference: pass" in out
    cex = tmp_path / f"I4-{bug}.json"
    assert json.loads(cex.read_text())["tags"] == ["counterexample", "I4", bug]
    mutant = str(crossreplay.mutant_path(bug))
    assert replay_cli.main(parse(replay_cli, str(cex), mutant)) == 1
    assert replay_cli.main(parse(replay_cli, str(cex), "impl")) == 0


def test_cli_fails_when_a_counterexample_does_not_fail_the_mutant(monkeypatch, capsys):
    """Point the bug's mutant at the reference: the model still reproduces it, the 'mutant' now passes."""
    bug = "eos_before_append"
    real = crossreplay.mutant_path
    monkeypatch.setattr(crossreplay, "mutant_path", lambda name: real("reference_scheduler" if name == bug else name))
    assert cli.main(parse(cli, "--quick", "--slots", "2", "--inject", bug, "--only", "I3")) == 1
    out = capsys.readouterr().out
    assert "mutant: pass" in out and "does NOT always fail" in out


def test_not_expressible_bugs_are_explained():
    assert set(variants.NOT_EXPRESSIBLE).isdisjoint(variants.EXPRESSIBLE)
    assert cli.main(parse(cli, "--quick", "--inject", "batch_not_copied")) == 1
