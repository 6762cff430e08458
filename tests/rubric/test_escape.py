"""One hostile string through every output grading writes: nothing of it comes out raw, nothing raises.

The string holds what an entry name, an exception type or message, a returned value or a load
error may hold: terminal escapes, CR and NUL, lone surrogates (and an undecodable file-name byte),
bidi overrides, HTML tags and comments, Markdown links, headings and table rows on lines of their
own, a spreadsheet formula at its start, and far more text than a report should show.
"""

import csv
import io
import json
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

from conformance.grading.escape import csv_cell, json_inert, md, md_block, visible, visible_json
from conformance.grading.feedback import load_error_md, missing_md, replay_json
from conformance.grading.observe import Case, judge_case, observed_trace
from conformance.grading.outputs import (
    Grade,
    ItemResult,
    dumps,
    gradescope_results,
    junit_xml,
    overview_md,
    report_md,
    summary_csv,
)
from conformance.grading.rubric import load_rubric
from conformance.grading.scoring import in_scope, run_notes, score_item
from conformance.grading.tables import markdown_table
from conformance.sandbox.protocol import Decoded
from conformance.sandbox.types import LoadFailure, WorkloadResult
from spec.golden import golden_cases

EVIL = ('=HYPERLINK("http://x","100")\r\x1b[2K\x1b[32mPASSED\x00\x07\ud800\udcff\u202e'
        "<img src=x onerror=alert(1)><script>alert(2)</script>[see](javascript:alert(3))![i](data:x)<!--"
        "\n| fake | 100 of 100 | passed |\n# All tests passed\n**100 / 100** on corpus\n```\n</failure>&amp;\ufffe"
        + "z" * 5000)
RAW = ["<img", "<script", "</failure", "<!--", "](javascript", "](data", "\n| fake", "\n# All", "\n**100",
       "\r", "\x1b", "\x00", "\x07", "\ud800", "\udcff", "\u202e", "\ufffe", "z" * 400]
RUBRIC = load_rubric()


def snapshot(ids: list[str]) -> dict:
    return {"blocks_used": 0, "num_preemptions": 0, "waiting": ids, "running": ids, "finished": ids,
            "seqs": {i: {"num_computed": 0, "num_tokens": 0, "num_blocks": 0, "status": EVIL, "output": []}
                     for i in ids}}


def evil_grade(tmp_path) -> Grade:
    """A grade whose every part the submission chose: name, exception type and message, returned ids, load error."""
    golden = golden_cases()[0]
    case = Case(f"golden/{golden.name}", golden.workload, ("golden",), golden)
    returned = {"step": 1, "added": [EVIL], "schedule": [[EVIL, 5]], "after_schedule": snapshot([EVIL]),
                "sampled": [[EVIL, 0, 100]], "finished": [EVIL], "after_update": snapshot([EVIL])}
    error = {"step": 2, "call": EVIL, "kind": EVIL, "message": EVIL}
    results = (WorkloadResult(0, "w", "exception", EVIL, Decoded((returned,), "error", error, EVIL, None)),)
    observed = [observed_trace(case.workload, results[0])]
    verdicts = [judge_case(case, observed[0], None, None)]
    finding = next(f for f in verdicts[0].values() if f is not None)
    short, full = load_error_md(SimpleNamespace(load_failure=LoadFailure("exception", EVIL, EVIL, EVIL)), "")
    _, from_text = load_error_md(object(), f"exception: ValueError: {EVIL}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "<img src=x onerror=alert(1)>[a](javascript:x)\x1b.py").write_text("")
    items = tuple(score_item(i, RUBRIC, (case,), verdicts, [{}], results, observed) if in_scope(i, case)
                  else ItemResult(i, 0.0, "does not load", md(short)) for i in RUBRIC.items)
    notes = (*run_notes(RUBRIC, SimpleNamespace(workloads=results, stdout_truncated=False, stderr_truncated=False)),
             EVIL)
    return Grade(EVIL, RUBRIC, items, "process-group", notes=notes, exploration=(EVIL,),
                 counterexample=markdown_table(case.workload, observed[0], finding, case.vector_id),
                 replay=replay_json(case, finding),
                 feedback="\n\n".join([full, from_text, missing_md(tmp_path / "sub", EVIL)]))


CSV_RAW = [r for r in RAW if not r.startswith(("<", "]("))]  # a CSV cell keeps the name's text: a cell is no markup


def assert_inert(name: str, text: str, raw: list[str] = RAW) -> None:
    found = [r for r in raw if r in text]
    assert found == [], f"{name} shows raw {found}"
    text.encode("utf-8")  # writable as UTF-8


def test_one_hostile_string_through_every_output(tmp_path) -> None:
    g = evil_grade(tmp_path)
    assert any(r.status == "crashed" for r in g.items) and "ValueError" in g.feedback  # the paths were taken
    results = gradescope_results(g)
    shown = [results["output"], *(t["name"] + t["output"] for t in results["tests"] if t["visibility"] == "visible")]
    assert_inert("results.json", "\n".join(shown))
    assert json.loads(dumps(results)) == json.loads(dumps(results).encode("utf-8"))
    report = report_md(g)
    assert_inert("report.md", report)
    assert "&lt;img" in report and "javascript\\:" in report and "\\x1b" in report  # shown, not dropped
    junit = junit_xml(g)
    assert_inert("junit.xml", junit)
    suite = ET.fromstring(junit.encode("utf-8")).find("testsuite")
    assert len(suite.findall("testcase")) == len(RUBRIC.items) and suite.get("name").startswith("schedcheck.=HYPER")
    other = Grade("honest", RUBRIC, g.items, "process-group")
    table = summary_csv([g, other])
    assert_inert("summary.csv", table, CSV_RAW)
    rows = list(csv.reader(io.StringIO(table, newline="")))
    assert len(rows) == 3 and all(len(r) == len(rows[0]) for r in rows)
    assert not [c for r in rows for c in r if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert rows[1][0].startswith("'=HYPERLINK")
    assert_inert("overview.md", overview_md([g, other]))


def test_data_records_keep_the_text_and_never_fail_to_write() -> None:
    record = {"name": "bad\udcff\udcfe.py", "message": "lone \ud800 and NUL \x00"}
    assert json.loads(dumps(record).encode("utf-8")) == record  # lone surrogates written as \u escapes: lossless
    joined = json.loads(dumps({"s": EVIL}).encode("utf-8"))["s"]  # a high surrogate before a low one
    assert "\\ud800\udcff" in joined and joined.startswith('=HYPERLINK("http://x","100")\r\x1b')


@pytest.mark.parametrize("c, shown", [("\r", "\\r"), ("\n", "\\n"), ("\x1b", "\\x1b"), ("\x85", "\\x85"),
                                      ("\ud800", "\\ud800"), ("\udcff", "\\xff"), ("\u202e", "\\u202e"),
                                      ("\ufffe", "\\ufffe"), ("\U000e0041", "\\U000e0041"), ("é", "é")])
def test_unsafe_characters_are_shown_as_escapes(c: str, shown: str) -> None:
    assert visible(f"a{c}b") == f"a{shown}b"


def test_markdown_cannot_start_a_line_link_or_tag() -> None:
    assert md("- x") == "\\- x" and md("1. x") == "1\\. x" and md("# h") == "\\# h" and md("=x") == "\\=x"
    assert md("see http://evil.example") == "see http\\://evil.example" and md("www.x.y") == "www\\.x.y"
    assert md("a&b<c>") == "a&amp;b&lt;c&gt;"


def test_csv_cells_starting_a_formula_are_inert() -> None:
    assert [csv_cell(s) for s in ("=1", "+1", "-1", "@x", "\tx", "ok")] == ["'=1", "'+1", "'-1", "'@x", "\\tx", "ok"]


def test_json_shown_in_a_report_decodes_to_the_same_value_and_holds_no_markup() -> None:
    value = {"message": EVIL, "actual": [EVIL] * 300, "n": 3}
    text = json_inert(value)
    assert not [c for c in "<>&()!`|*\n\r" if c in text]
    assert json.loads(text) == visible_json(value) and len(json.loads(text)["actual"]) == 101


def test_a_code_block_cannot_be_closed_by_its_text() -> None:
    block = md_block("x\n```\n\x1b y")
    assert block.startswith("````\n") and block.endswith("\n````") and "\x1b" not in block
