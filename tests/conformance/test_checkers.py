"""Checkers judge observed traces: each divergence is one finding with a rule id, never a crash."""

import copy

from conformance.adapters import SpecAdapter
from conformance.checks.checkers import differential, hygiene, invariants, liveness
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
