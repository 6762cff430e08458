"""Translation validation: the z3 encoding computes what spec/rules.py computes, field by field, step by step."""

import itertools

import pytest
import z3

import spec.rules
from spec import faults
from spec.bounded import offstates, validate, witness
from spec.bounded.encode import Bounds
from spec.bounded.transition import Run
from tests.proofs.encodings import encoding

DEFAULT = 60  # workloads of the stream in the default run
SMALL = Bounds(slots=3, steps=5)  # a cheaper unrolling, for the tests that rebuild the encoding


def validator():
    return encoding()  # validate.Validator(), built once per process (tests/proofs/encodings.py)


@pytest.mark.long
def test_the_encoding_agrees_with_the_spec_on_the_stream():
    v = validator()
    bad = [m for w in itertools.islice(validate.stream(validate.SEED, DEFAULT), DEFAULT) if (m := v.compare(w))]
    assert bad == [], str(bad[0])


def test_the_stream_preempts_in_at_least_30_percent_of_its_steps_with_every_kind_of_preemption():
    stats = validate.Stats()
    for w in validate.stream(validate.SEED, DEFAULT):
        stats.count(validate.run(spec.rules, w, validate.STREAM.steps))
    assert stats.preempting_share >= 0.3, stats
    assert stats.self_preemptions and stats.double_preemptions and stats.readmissions, stats


@pytest.mark.long
def test_the_validation_meets_every_quota_at_every_block_size():
    """What prove --quick compares: the stream, then workloads aimed at the cells it left short."""
    bad, stats = validate.validate(DEFAULT, validator=validator())  # the Validator validate() would build
    assert bad == [] and stats.quotas is not None
    assert stats.quotas.short() == [], stats.quotas.to_json()
    assert stats.quotas.block_sizes == (1, 2, 3, 4) and "victims" in stats.quotas.kinds


def test_a_quota_the_spec_cannot_fill_is_reported_short(monkeypatch):
    monkeypatch.setattr(validate.quotas, "ATTEMPTS", 0)
    _, stats = validate.validate(5, validator=validator())
    assert stats.quotas is not None and ("victims", 4) in stats.quotas.short()


def test_one_step_from_drawn_states_agrees_and_raises_every_flag():
    """FA's and FD's flags never rise on a run of the spec; from drawn states both sides raise them."""
    bad, counts = offstates.validate_states(validate.SEED)
    assert bad == [], str(bad[0])
    assert counts.short((1, 2, 3, 4)) == [], counts.to_json((1, 2, 3, 4))


def test_the_kinds_of_step_are_read_off_the_spec_run():
    from spec.model import Config
    from spec.trace import Request, make_workload
    w = make_workload(Config(2, 1, 3, 4, 0), [Request("b", 1, 2, 1), Request("a", 1, 1, 2), Request("c", 1, 1, 2),
                                              Request("d", 1, 1, 3)], eos_at={"c": [0]})
    kinds = validate.quotas.step_kinds(validate.run(spec.rules, w, 10))
    # step 2: b finishes at max_tokens while a and c wait (b holds the cache); step 3: d arrives behind them, and
    # a (max_tokens) then c (eos) finish in batch order
    assert kinds[:3] == [set(), {"finish"}, {"finish", "finishes", "max_then_eos", "arrive_behind"}], kinds


def test_the_evaluator_agrees_with_the_solver():
    """Validation evaluates the encoding's terms without z3; on a few workloads the solver's model says the same."""
    v = validator()
    for w in validate.stream(validate.SEED, 3):
        assert v.compare(w, solver=True) is None
        solved, evaluated = v.model(w, solver=True), v.model(w)
        for t in (v.run.post[-1].used, *v.run.post[-1].drawn, *v.run.mid[3].queue):
            assert witness.val(solved, t) == witness.val(evaluated, t)


@pytest.mark.parametrize("name", ["preempt_to_tail", "preempt_clears_output", "max_tokens_off_by_one",
                                  "blocks_by_num_tokens", "phase2_continue", "no_admission_after_preemption"])
def test_a_fault_planted_in_the_spec_makes_the_validation_fail(name):
    """What `prove --quick` runs: the encoding against spec.rules; with a fault in the spec they disagree."""
    v = validator()
    v.rules = faults.load(name)
    try:
        found = next((m for w in validate.stream(validate.SEED, 150) if (m := v.compare(w))), None)
    finally:
        v.rules = spec.rules
    assert found is not None, f"{name} is not seen by the validation"
    assert "step" in str(found) and "encoding" in str(found)


def test_a_planted_encoding_mistake_is_caught(monkeypatch):
    """The comparison can fail on the encoding's side too: a preemption that forgets to free the victim's blocks."""
    original = Run.preempt

    def leaky(self, s):
        out = original(self, s)
        return out.__class__(*(getattr(out, f) if f != "used" else s.used for f in out.__slots__))
    monkeypatch.setattr(Run, "preempt", leaky)
    bad, _ = validate.validate(40, bounds=SMALL)
    assert bad and bad[0].field.startswith("after schedule()"), bad


@pytest.mark.long
def test_unrolling_one_round_short_is_seen():
    """`unwind` holds on the exact unrolling and fails on a shorter one."""
    bad, _ = validate.validate(30, bounds=SMALL)
    assert bad == []
    Run.rounds = -1
    try:
        bad, _ = validate.validate(30, bounds=SMALL)
    finally:
        Run.rounds = 0
    assert bad and bad[0].field == "unwind"


def test_every_defined_term_is_a_named_constant():
    """The evaluator relies on `v == t` definitions; a definition of another shape would be skipped silently."""
    run = validator().run
    assert all(z3.is_eq(d) for d in run.defs)


@pytest.mark.slow
@pytest.mark.parametrize("part", range(4))
def test_the_encoding_agrees_with_the_spec_on_10000_workloads(part):
    """10,000 workloads of the stream, in four parts of 2,500 (each can be rerun alone)."""
    bad, stats = validate.validate(2_500, skip=2_500 * part)
    assert bad == [], str(bad[0])
    assert stats.preempting_share >= 0.3, stats
