"""Grading outputs: Gradescope results.json validity, JUnit XML, the class summary and overview."""

import csv
import io
import json
import xml.etree.ElementTree as ET
from dataclasses import replace

from conformance.grading.escape import cut, md, md_block, md_code, xml_text
from conformance.grading.feedback import load_error_md, missing_md
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


HOSTILE = "| x | <script>alert(1)</script> [a](javascript:x) **b** `c` \x00\x1b]0;t\x07 " + "z" * 5000


def visible_text(obj):
    return obj["output"] + "".join(t["name"] + t["output"] for t in obj["tests"] if t["visibility"] == "visible")


def test_a_held_back_item_is_in_no_visible_field_and_the_total_is_not_shown():
    obj = gradescope_results(grade("bad", MIXED))
    held = [t for t in obj["tests"] if t["visibility"] != "visible"]
    assert [t["name"] for t in held] == [RUBRIC.items[-1].name]
    assert RUBRIC.items[-1].name not in visible_text(obj) and "differential: passed" not in visible_text(obj)
    assert "/ 100" not in obj["output"] and "on the items shown now; 1 more item(s)" in obj["output"]
    assert obj["score"] == round(sum(t["score"] for t in obj["tests"]), 2)  # Gradescope holds the total back
    assert RUBRIC.items[-1].name in report_md(grade("bad", MIXED))  # the instructor's report has everything


def test_with_every_item_visible_the_total_is_shown():
    rubric = load_rubric()
    items = tuple(ItemResult(replace(i, visibility="visible"), i.points, "passed", "") for i in rubric.items)
    obj = gradescope_results(Grade("ok", rubric, items, "process-group"))
    assert obj["output"].startswith("**100 / 100**")


def test_submission_text_is_escaped_and_bounded():
    text = md(HOSTILE)
    assert len(text) < 700 and "<script>" not in text and "\\|" in text and "\x00" not in text
    assert "\\[a\\]\\(javascript\\:x\\)" in text and "\\*\\*b\\*\\*" in text and "\\\\x1b" in text
    assert cut(HOSTILE).endswith("…") and len(cut(HOSTILE)) == 300
    assert md_code("a`b").startswith("``") and md_block("```\nx").startswith("````\n")
    assert "\x00" not in xml_text(HOSTILE) and "\\x00" in xml_text(HOSTILE) and "&lt;script&gt;" in xml_text(HOSTILE)


def test_junit_and_markdown_survive_a_hostile_output():
    g = grade("bad", MIXED)
    items = tuple(ItemResult(r.item, r.score, r.status, HOSTILE) for r in g.items)
    g = Grade("x\x01<y>", RUBRIC, items, "pid-namespace", notes=(HOSTILE,))
    root = ET.fromstring(junit_xml(g))  # parses: control characters dropped, markup escaped
    assert root.find("testsuite").get("name") == "schedcheck.x\\\\x01\\<y\\>"
    summary = gradescope_results(g)["output"]
    assert "<script>" not in summary and len(summary) < 3000


def test_a_syntax_error_is_shown_at_its_line_from_the_sandbox_text():
    text = "exception: SyntaxError: ('invalid syntax', ('/tmp/schedcheck-sandbox-x1/p07_scheduler.py', 2, 7, " \
           "'def f(:\\n', 2, 8))"
    short, full = load_error_md(object(), text)
    assert short == "does not load: SyntaxError at p07_scheduler.py:2"
    assert "    2 | def f(:\n      |       ^" in full and "schedcheck-sandbox" not in full


def test_another_load_error_shows_its_type_and_escaped_message():
    short, full = load_error_md(object(), "exception: ValueError: <b>" + "x" * 2000)
    assert short == "does not load: ValueError" and "<b>" not in full and len(full) < 800


def test_a_missing_file_lists_what_was_found_and_what_to_rename(tmp_path):
    (tmp_path / "P07_Scheduler.py").write_text("")
    (tmp_path / "readme.txt").write_text("")
    text = missing_md(tmp_path, "the folder holds no p07_scheduler.py")
    assert "- `P07_Scheduler.py`\n- `readme.txt`" in text and "Rename `P07_Scheduler.py` to `p07_scheduler.py`" in text
    assert "holds no files" in missing_md(tmp_path / "empty", "nothing")
