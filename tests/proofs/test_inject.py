"""Every claim can fail: a fault planted in spec/rules.py (spec/faults.py) breaks it, and the checks see it.

The model checker runs the patched spec itself; the same scope on spec.rules breaks nothing. A counterexample
then fails the mutant submission of the same catalog bug and passes the references (conformance/crosscheck).
"""

import argparse

import pytest

import spec.rules
from conformance.crosscheck import replay as crosscheck
from spec import faults
from spec.bounded import cli, execute
from spec.bounded import modelcheck as mc
from spec.model import Config, Policy
from spec.trace import Request, make_workload, workload_to_json

# claim -> (a fault that breaks it, the scope: Config(num_blocks, block_size, max_num_seqs, budget), requests)
BREAKS = {
    "I1": ("finish_keeps_blocks", (1, 1, 1, 1), ((1, 1), (1, 1))),
    "I2": ("budget_not_shared", (2, 2, 2, 1), ((1, 2), (1, 1))),
    "I3": ("sample_during_prefill", (1, 2, 1, 1), ((1, 1), (2, 1))),
    "I4": ("preempt_clears_output", (2, 1, 2, 2), ((1, 2), (1, 2))),
    "I5": ("preempt_to_tail", (2, 1, 2, 2), ((1, 2), (1, 2), (1, 1))),
    "I6": ("max_num_seqs_off_by_one", (2, 1, 1, 2), ((1, 1), (1, 1))),
    "FA": ("budget_not_shared", (4, 1, 2, 1), ((2, 2), (2, 2))),
    "FB": ("budget_not_shared", (2, 2, 2, 1), ((1, 2), (1, 1))),
    "FC": ("budget_not_shared", (4, 1, 2, 1), ((4, 1), (1, 2))),
    "FD": ("preempt_keeps_blocks_used", (2, 1, 2, 2), ((1, 2), (1, 2))),
    "NP": ("self_preemption_counted_twice", (2, 2, 2, 3), ((1, 2), (2, 2))),
    "BO": ("admitted_first_in_batch", (2, 2, 2, 2), ((1, 2), (1, 1))),
    "FIN": ("eos_finished_first", (2, 1, 2, 2), ((1, 1), (1, 1))),
    "FR": ("max_tokens_off_by_one", (1, 1, 1, 1), ((1, 1), (1, 1))),
    "SA": ("sampler_sees_last_token", (4, 1, 2, 2), ((1, 3), (1, 1))),
    "CH": ("decode_not_charged", (2, 2, 2, 2), ((1, 2), (2, 2))),
    "AD": ("no_admission_after_preemption", (2, 2, 2, 3), ((1, 2), (2, 2))),
    "PG": ("hold_said_not_kept", (4, 2, 2, 4, None, Policy.parse("vllm-v1:reserve_full_isl=false")), ((1, 3), (3, 3))),
    "OUT": ("preempt_clears_output", (2, 1, 2, 2), ((1, 2), (1, 2))),
    "LIVE": ("max_tokens_off_by_one", (1, 1, 1, 1), ((1, 1), (1, 1))),
    "deadlock": ("no_chunked_prefill", (1, 2, 1, 1), ((1, 1), (2, 1))),
    "crash": ("victim_first", (2, 2, 2, 3), ((1, 2), (2, 2))),
    "protocol": ("protocol_pending_truthy", (1, 1, 1, 1), ((1, 1),)),
}


def parse(*argv):
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    return p.parse_args(argv)


def test_every_claim_has_a_fault_that_breaks_it():
    assert set(BREAKS) == set(mc.CLAIMS)
    assert {c.name for c in cli.checks.CLAIMS} - {"unwind"} <= set(BREAKS)  # unwind: test_encoding.py


@pytest.mark.parametrize("claim", sorted(BREAKS))
def test_the_model_checker_sees_the_claim_fail_on_the_faulty_spec_only(claim):
    fault, config, requests = BREAKS[claim]
    scope = mc.Scope(Config(*config), requests)
    broken = mc.explore(scope, faults.load(fault), every=True)
    assert claim in [c for c, _, _ in broken.broken], f"{fault} does not break {claim}: {broken.broken}"
    trace = next(t for c, _, t in broken.broken if c == claim)
    assert 1 <= len(trace) <= 6
    clean = mc.explore(scope, spec.rules)
    assert clean.violation is None and clean.distinct > 1


@pytest.mark.parametrize("fault", sorted(faults.OBSERVABLE))
def test_each_observable_fault_breaks_its_claim_and_no_other(fault):
    """num_preemptions, the order of the batch and of finishing are compared by the validation; before NP, BO and
    FIN no claim read them, so each of these faults broke nothing."""
    claim = next(c for c, (f, _, _) in BREAKS.items() if f == fault)
    _, config, requests = BREAKS[claim]
    broken = mc.explore(mc.Scope(Config(*config), requests), faults.load(fault), every=True)
    assert [c for c, _, _ in broken.broken] == [claim], broken.broken


def test_np_can_fail_on_the_encoding_too(monkeypatch):
    """A preemption the encoding counts twice: BMC of NP finds it (and replays nothing on the spec, which is right)."""
    from spec.bounded import checks, transition
    original = transition.Run.preempt

    def twice(self, s):
        out = original(self, s)
        return out.__class__(*(getattr(out, f) if f != "preemptions" else out.preemptions + 1 for f in out.__slots__))
    monkeypatch.setattr(transition.Run, "preempt", twice)
    r = checks.check("NP", cli.QUICK)
    assert r.verdict == "counterexample" and r.step is not None


@pytest.mark.parametrize("fault", sorted(faults.GUARDS))
def test_every_fault_of_a_guard_breaks_the_protocol_claim(fault):
    """The guards of update(), schedule() and add() are checked at every state: a request add() should refuse
    (or one it should take) shows at the first state, before any step."""
    scope = mc.Scope(Config(2, 1, 2, 2), ((1, 1), (1, 1)))
    broken = mc.explore(scope, faults.load(fault), every=True)
    assert "protocol" in [c for c, _, _ in broken.broken], f"{fault}: {broken.broken}"
    assert mc.explore(scope, spec.rules).violation is None


def test_out_compares_with_the_unpreempted_output_and_fails_on_output_cleared():
    """The card's property: a preempted sequence's output equals its output in a run without preemption. With
    output cleared on preemption the sequence draws new tokens after it comes back, so its output differs."""
    w = make_workload(Config(3, 2, 3, 4, 0), [Request("r0", 2, 3, 1), Request("r1", 2, 3, 1)])
    assert execute.violations(spec.rules, w, 10) == {}
    steps = execute.run(spec.rules, w, 10)
    assert steps[-1].after_update.num_preemptions >= 1  # the clean run does preempt, and keeps the output
    found = execute.violations(faults.load("preempt_clears_output"), w, 10)
    assert found["OUT"] == ["r1: [202, 203, 204] with preemption, [200, 201, 202] without"]


# a small three-request scope for the command's own tests (the command's default scopes take minutes)
TINY = (dict(num_blocks=2, block_size=1, budget=2, max_num_seqs=2, requests=3, prompt_len=1, max_tokens=2),)


@pytest.mark.long
@pytest.mark.parametrize("fault", ["no_admission_after_preemption", "chunk_only_first"])
def test_a_fault_that_only_delays_breaks_ad_and_the_validation_sees_it_too(fault, capsys):
    """It only delays a sequence (the victim by a step; a head that needs a chunk, until a step schedules nobody
    before it): every invariant holds and the outputs are the same. AD (phase 2 stops only at a gate) sees the
    head held for nothing; in a scope too small for that, no claim breaks and the validation still sees it."""
    broken = mc.explore(mc.Scope(Config(2, 2, 2, 3 if fault == "no_admission_after_preemption" else 2),
                                 ((1, 2), (2, 2))), faults.load(fault), every=True)
    assert [c for c, _, _ in broken.broken] == ["AD"], broken.broken
    assert cli.inject(fault, True, TINY) == 1
    out = capsys.readouterr().out
    assert "no claim breaks" in out and "validation sees it" in out


@pytest.mark.long
def test_inject_exits_0_and_names_the_broken_claims(capsys):
    assert cli.inject("preempt_clears_output", True, TINY) == 0
    out = capsys.readouterr().out
    assert "preempt_clears_output: breaks " in out and "OUT" in out and "I4" in out
    assert "the encoding differs from the spec with preempt_clears_output" in out


@pytest.mark.slow
def test_the_command_line_inject_runs_the_default_scopes(capsys):
    assert cli.main(parse("--quick", "--inject", "preempt_to_tail")) == 0
    assert "I5" in capsys.readouterr().out


def test_not_expressible_faults_are_explained(capsys):
    assert cli.main(parse("--quick", "--inject", "batch_not_copied")) == 1
    assert "not expressible" in capsys.readouterr().out


@pytest.mark.parametrize("fault", ["preempt_clears_output", "preempt_to_tail", "finish_keeps_blocks"])
def test_a_counterexample_fails_the_mutant_submission_and_passes_the_references(fault):
    """A workload on which the faulty spec breaks a claim: the mutant of the same bug fails the conformance
    checks on it, and impl, the reference scheduler and the spec pass them."""
    w = make_workload(Config(2, 1, 3, 2, 0), [Request("r0", 1, 2, 1), Request("r1", 1, 2, 1), Request("r2", 1, 1, 1)])
    assert execute.violations(faults.load(fault), w, 10), f"{fault} breaks no claim on the workload"
    data = workload_to_json(w)
    for ref in crosscheck.REFERENCES + ("spec",):
        assert crosscheck.verdict(data, ref) == "pass", ref
    assert crosscheck.verdict(data, fault).startswith("FAIL [")
