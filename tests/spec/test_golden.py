"""The card's five worked cases, step by step (spec/golden/*.toml)."""

import pytest

from spec.golden import check_case, golden_cases
from spec.trace import run_workload, trace_to_json

CASES = golden_cases()


def test_all_five_card_cases_are_bundled():
    assert {c.name for c in CASES} == {"budget16", "example1", "example2", "example3", "self_preemption"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_model_reproduces_card_case_step_by_step(case):
    trace = trace_to_json(run_workload(case.workload))
    assert check_case(case, trace) == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden_check_reports_a_changed_batch(case):
    trace = trace_to_json(run_workload(case.workload))
    first = trace["steps"][0]["schedule"]
    first[0][1] += 1
    problems = check_case(case, trace)
    assert problems and "step 1: schedule() returned" in problems[0]


def test_golden_check_reports_reordered_batch():
    case = next(c for c in CASES if c.name == "example1")
    trace = trace_to_json(run_workload(case.workload))
    trace["steps"][0]["schedule"].reverse()
    assert any("order matters" in p for p in check_case(case, trace))


def test_golden_check_reports_wrong_white_box_fields_and_outputs():
    case = next(c for c in CASES if c.name == "self_preemption")
    trace = trace_to_json(run_workload(case.workload))
    trace["steps"][1]["after_update"]["seqs"]["a2"]["output"] = []
    trace["steps"][1]["after_update"]["blocks_used"] = 3
    trace["outputs"]["a2"] = [200, 201]
    problems = check_case(case, trace)
    assert any("a2.output is []" in p for p in problems)
    assert any("blocks_used is 3" in p for p in problems)
    assert any("final outputs" in p for p in problems)
