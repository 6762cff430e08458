"""overview.html: the class at a glance, offline, escaped; each student's counterexample in the viewer."""

from html.parser import HTMLParser

from conformance.grading.outputs import Grade, ItemResult
from conformance.grading.rubric import load_rubric
from conformance.viewer.dashboard import overview_html, write_dashboard
from spec.golden import case_named
from spec.trace import workload_to_json

RUBRIC = load_rubric()
HOSTILE = '<img src=x onerror="alert(1)">'


def grade(name, fraction, diagnosis=(), replay=None):
    items = tuple(ItemResult(i, i.points * fraction, "passed" if fraction == 1 else "failed", "") for i in RUBRIC.items)
    return Grade(name, RUBRIC, items, "test", tuple(diagnosis), replay=replay)


def counterexample():
    finding = {"check": "differential", "rule": "P2.stop", "step": 2, "call": "schedule",
               "message": "schedule() returned {a1: 1, a2: 2}, the spec returns {a1: 1}"}
    return {"format": "schedcheck/workload", **workload_to_json(case_named("example2").workload), "finding": finding}


class Bars(HTMLParser):
    def __init__(self):
        super().__init__()
        self.bars, self.links = {}, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "rect" and "data-bin" in a:
            self.bars[int(a["data-bin"])] = int(a["data-count"])
        if tag == "a":
            self.links.append(a["href"])


def test_the_histogram_counts_every_submission_in_its_tenth():
    grades = [grade("full", 1.0), grade("half", 0.5, ["victim_first"], counterexample()), grade("none", 0.0)]
    bars = Bars()
    bars.feed(overview_html(grades))
    assert bars.bars == {0: 1, 1: 0, 2: 0, 3: 0, 4: 0, 5: 1, 6: 0, 7: 0, 8: 0, 9: 1}
    assert set(bars.links) == {"./full/report.html", "./half/report.html", "./none/report.html"}


def test_a_link_is_relative_whatever_the_folder_name_holds():
    """A name such as "javascript:alert(1)" never reaches a link as a scheme (collect.slug makes folder names
    plain, and the link starts with ./ and quotes what it holds anyway)."""
    bars = Bars()
    bars.feed(overview_html([grade("javascript:alert(1)", 1.0), grade("a b?c#d", 0.5)]))
    assert bars.links and all(link.startswith("./") and link.endswith("/report.html") for link in bars.links)
    assert not any(c in link[2:-12] for link in bars.links for c in ":?# ")


def test_submission_names_and_grader_errors_are_escaped():
    page = overview_html([grade(HOSTILE, 0.2)], failures=[("bad.zip", HOSTILE)], not_graded=[("x.zip", HOSTILE)])
    assert "<img src=x" not in page and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "1 grader errors" in page and "1 not graded" in page and "(no known bug matches)" in page


def test_each_student_with_a_counterexample_gets_a_viewer_page(tmp_path):
    grades = [grade("full", 1.0), grade("half", 0.5, ["victim_first"], counterexample())]
    for g in grades:
        (tmp_path / g.submission).mkdir()
    write_dashboard(tmp_path, grades)
    page = (tmp_path / "half" / "report.html").read_text()
    assert 'id="step-2"' in page and "P2.stop" in page and "FAIL" in page
    assert not (tmp_path / "full" / "report.html").exists()
    assert "victim_first" in (tmp_path / "overview.html").read_text()
