"""Checkers judge observed traces: each divergence is one finding with a rule id, never a crash."""

import copy

import pytest

from conformance.adapters import SpecAdapter
from conformance.checks.checkers import differential, hygiene, liveness
from conformance.checks.whitebox import invariants
from conformance.drivers import run_workload
from spec.golden import case_named
from spec.model import Config
from spec.trace import Request, make_workload


def observed_case(name):
    return run_workload(case_named(name).workload, SpecAdapter)


def test_the_spec_agrees_with_itself_on_every_check():
    w = case_named("self_preemption").workload
    obs = run_workload(w, SpecAdapter)
    assert differential(w, obs) == invariants(w, obs) == liveness(w, obs) == hygiene(w, obs) == []


def test_differential_names_the_first_divergent_step_and_the_spec_rule():
    w = case_named("self_preemption").workload
    obs = copy.deepcopy(run_workload(w, SpecAdapter))
    obs["steps"][1]["schedule"] = [["a1", 1], ["a2", 2]]  # a2 admitted although it preempted itself
    [f] = differential(w, obs)
    assert (f.check, f.step, f.call, f.rule) == ("differential", 2, "schedule", "P2.stop")
    assert any(line.startswith("P1.skip_self") for line in f.explanation)


def test_differential_compares_sample_calls_and_final_outputs():
    w = case_named("example1").workload
    obs = copy.deepcopy(run_workload(w, SpecAdapter))
    obs["steps"][0]["sampled"].append(["a2", 0, 200])  # a sample after a partial prefill chunk
    assert differential(w, obs)[0].rule == "U.partial"
    obs = copy.deepcopy(run_workload(w, SpecAdapter))
    obs["outputs"]["a1"] = [100, 101]
    [f] = differential(w, obs)
    assert (f.call, f.expected, f.actual) == ("outputs", [100, 101, 102], [100, 101])


def test_invariants_read_the_white_box_snapshot():
    w = case_named("example2").workload
    obs = copy.deepcopy(run_workload(w, SpecAdapter))
    obs["steps"][1]["after_schedule"]["seqs"]["a2"]["output"] = []  # output lost on preemption
    [f] = invariants(w, obs)
    assert (f.rule, f.step, f.call) == ("I4", 2, "schedule")


def test_liveness_flags_an_empty_batch_while_work_is_waiting():
    w = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 2)])
    obs = copy.deepcopy(run_workload(w, SpecAdapter))
    obs["steps"][0]["schedule"] = []
    assert liveness(w, obs)[0].rule == "L.progress"


def test_hygiene_reports_unknown_ids_and_nonpositive_counts():
    w = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 2)])
    obs = copy.deepcopy(run_workload(w, SpecAdapter))
    obs["steps"][0]["schedule"] = [["ghost", 1]]
    assert hygiene(w, obs)[0].rule == "H.unknown_id"
    obs["steps"][0]["schedule"] = [["a1", 0]]
    assert hygiene(w, obs)[0].rule == "H.nonpositive"


# --- white box: every field against the spec, named by the most specific invariant -------------------


def test_a_running_sequence_with_status_waiting_is_i6_not_i4():
    w = case_named("example2").workload
    obs = copy.deepcopy(run_workload(w, SpecAdapter))
    snap = obs["steps"][0]["after_schedule"]
    assert "a1" in snap["running"]
    snap["seqs"]["a1"]["status"] = "WAITING"  # still in running: I4 would read it as "preempted but kept blocks"
    [f] = invariants(w, obs)
    assert (f.rule, f.step, f.call) == ("I6", 1, "schedule")


def test_precedence_table_names_the_most_specific_violation():
    from conformance.checks.whitebox import PRECEDENCE, most_specific
    from spec.invariants import Violation

    status = Violation("I6", "a1", "RUNNING", "WAITING", "a1 is in running with status WAITING")
    kept = Violation("I4", "a1", (0, 0), (2, 1), "a1 was preempted but kept num_computed 2, num_blocks 1")
    lost = Violation("I4", "a2", [200], [], "a2.output was [200], now []")
    echo = Violation("I3", "a2", 0, 2, "a2 is waiting with num_computed 2")
    blocks = Violation("I1", None, 2, 3, "blocks_used is 3 but running sequences hold 2")
    too_many = Violation("I6", None, "<= 2", 3, "3 sequences running, max_num_seqs is 2")
    assert PRECEDENCE[0] == ("I6", "status")
    assert most_specific([kept, status]) is status
    assert most_specific([echo, blocks, lost]) is lost
    assert most_specific([too_many, blocks]) is blocks
    assert most_specific([echo, too_many]) is too_many


def test_a_finished_sequences_fields_are_compared_with_the_spec():
    w = case_named("example1").workload
    obs = copy.deepcopy(run_workload(w, SpecAdapter))
    last = obs["steps"][-1]["after_update"]
    assert last["seqs"]["a3"]["status"] == "FINISHED"
    last["seqs"]["a3"]["num_computed"] = 0  # reset after finishing: no invariant breaks, the spec disagrees
    [f] = invariants(w, obs)
    assert (f.rule, f.step, f.call, f.expected, f.actual) == ("I3", 3, "update", 3, 0)
    assert "a3.num_computed is 0, the spec's is 3" in f.message


@pytest.mark.parametrize("field, value, rule", [("num_preemptions", 7, "P1.preempt"),
                                                ("finished", ["a1", "a2", "a3"], "U.finish")])
def test_queues_and_counters_are_compared_with_the_spec(field, value, rule):
    w = case_named("example1").workload
    obs = copy.deepcopy(run_workload(w, SpecAdapter))
    last = obs["steps"][-1]["after_update"]
    assert last[field] != value
    last[field] = value  # breaks no invariant, but is not what the spec holds after the same batches
    [f] = invariants(w, obs)
    assert (f.rule, f.step, f.call) == (rule, 3, "update")


# --- equivalence that can fail ------------------------------------------------------------------------


def test_equivalence_catches_output_cleared_on_preemption_with_a_resampling_model():
    from conformance.adapters import load_target
    from conformance.checks.probes import equivalence

    w = case_named("self_preemption").workload
    [f] = equivalence(w, load_target("conformance/mutants/preempt_clears_output.py"))
    assert f.rule == "OUT" and f.actual != f.expected
    for target in ("impl", "spec", "conformance/mutants/reference_scheduler.py"):
        assert equivalence(w, load_target(target)) == []
