"""Grading outputs: Gradescope results.json validity, JUnit XML, the class summary and overview."""

import csv
import io
import json
import xml.etree.ElementTree as ET

from conformance.grading.outputs import (
    Grade,
    ItemResult,
    dumps,
    gradescope_results,
    junit_xml,
    overview_md,
    report_md,
    summary_csv,
    validate_gradescope,
)
from conformance.grading.rubric import load_rubric

RUBRIC = load_rubric()


def grade(name, statuses, diagnosis=(), seconds=1.0):
    items = []
    for item, status in zip(RUBRIC.items, statuses, strict=True):
        score = item.points if status == "passed" else item.points / 2 if status == "failed" else 0.0
        items.append(ItemResult(item, score, status, f"{item.id}: {status} <b>&</b>", 4, 4 if score else 0))
    return Grade(name, RUBRIC, tuple(items), "pid-namespace", tuple(diagnosis), execution_seconds=seconds,
                 counterexample="| step | ... |", replay={"format": "schedcheck/trace"})


ALL_PASS = ["passed"] * 7
MIXED = ["passed", "failed", "timeout", "passed", "crashed", "failed", "passed"]


def test_results_json_is_valid_gradescope():
    for g in (grade("ok", ALL_PASS), grade("bad", MIXED, ["preempt_to_tail"])):
        obj = json.loads(dumps(gradescope_results(g)))
        assert validate_gradescope(obj) == []
        assert obj["score"] == g.score and len(obj["tests"]) == 7
        assert all(t["output_format"] == "md" and t["max_score"] > 0 for t in obj["tests"])


def test_results_json_marks_every_non_passing_item_failed_with_its_cause():
    obj = gradescope_results(grade("bad", MIXED))
    assert [t["status"] for t in obj["tests"]] == ["passed", "failed", "failed", "passed", "failed", "failed",
                                                   "passed"]
    assert obj["tests"][2]["tags"] == ["fcfs", "timeout"]


def test_stable_results_differ_only_in_execution_time():
    a, b = grade("x", MIXED, seconds=1.0), grade("x", MIXED, seconds=9.0)
    assert dumps(gradescope_results(a, stable=True)) == dumps(gradescope_results(b, stable=True))
    assert gradescope_results(a)["execution_time"] != gradescope_results(b)["execution_time"]


def test_validator_catches_spec_violations():
    bad = {"score": "10", "visibility": "public", "tests": [{"status": "ok", "max_score": True, "tags": "x"}]}
    problems = validate_gradescope(bad)
    assert len(problems) == 5


def test_junit_xml_parses_and_counts_failures_and_errors():
    root = ET.fromstring(junit_xml(grade("bad & co", MIXED)))
    suite = root.find("testsuite")
    assert suite.get("name") == "schedcheck.bad & co"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("7", "2", "2")
    cases = suite.findall("testcase")
    assert cases[2].find("error").get("type") == "timeout"
    assert "<b>&</b>" in cases[1].find("failure").text


def test_summary_csv_has_one_row_per_submission_and_a_column_per_item():
    rows = list(csv.reader(io.StringIO(summary_csv([grade("b", MIXED, ["victim_first"]), grade("a", ALL_PASS)]))))
    assert rows[0][:3] == ["submission", "score", "max_score"] and len(rows[0]) == 3 + 7 + 2
    assert [r[0] for r in rows[1:]] == ["a", "b"]
    assert rows[2][-2] == "victim_first"


def test_overview_gives_distribution_pass_rates_and_common_bugs():
    grades = [grade("a", ALL_PASS), grade("b", MIXED, ["preempt_to_tail"]), grade("c", MIXED, ["preempt_to_tail"])]
    text = overview_md(grades)
    assert "3 submissions" in text and "| 90-100% | # 1 |" in text
    assert "| (1) Token budget and chunked prefill give the exact schedule | 3/3 |" in text
    assert "- preempt_to_tail: 2" in text


def test_report_names_exploration_as_not_counted():
    g = grade("x", MIXED)
    g = Grade(g.submission, g.rubric, g.items, g.isolation, exploration=("step 3: extra finding",))
    text = report_md(g)
    assert "Beyond the corpus (not counted in the score)" in text and "extra finding" in text
