"""The page without a browser: complete as a static document, escaped, small."""

from html.parser import HTMLParser

import pytest

from conformance.adapters import load_target
from conformance.drivers import run_workload as drive
from conformance.observed import Observed
from conformance.viewer.page import Names, render_page
from spec.golden import golden_cases
from spec.model import Config
from spec.trace import Request, make_workload, run_workload


def observe(*args, **kwargs):
    """The run as the viewer takes it: the driver's observed trace, read into its classes."""
    return Observed.from_json(drive(*args, **kwargs))


class Outline(HTMLParser):
    """What a reader without JavaScript gets: the step sections, the strips' cells, every script."""

    def __init__(self):
        super().__init__()
        self.sections, self.scripts, self.srcs, self.stack = [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a)
        if tag in ("script", "img", "link", "iframe") and (a.get("src") or a.get("href")):
            self.srcs.append(a.get("src") or a.get("href"))
        self.stack.append(tag)

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()


def outline(page):
    o = Outline()
    o.feed(page)
    return o


@pytest.mark.parametrize("case", golden_cases(), ids=lambda c: c.name)
def test_every_step_is_a_static_section_and_nothing_is_fetched(case):
    page = render_page(case.workload)
    o = outline(page)
    assert [int(s["data-step"]) for s in o.sections] == list(range(1, len(run_workload(case.workload).steps) + 1))
    assert o.srcs == []  # no script, style or image from anywhere: the page works offline
    assert "http://" not in page and "https://" not in page


def test_what_a_submission_returns_is_escaped_and_cut():
    w = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 1)])
    hostile = "<img src=x onerror=alert(1)>" * 50
    observed = drive(w, load_target("impl", None))
    observed["steps"][0]["schedule"] = [[hostile, 2]]
    page = render_page(w, Observed.from_json(observed), finding={"check": "differential", "step": 1, "rule": "P2",
                                             "message": "<script>alert(1)</script>"})
    assert "<img src=x" not in page and "<script>alert" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "more characters" in page


def test_the_first_difference_is_marked_and_a_conforming_run_has_none():
    case = next(c for c in golden_cases() if c.name == "example2")
    good = render_page(case.workload, observe(case.workload, load_target("impl", None)))
    assert not [s for s in outline(good).sections if "diverges" in s["class"]] and "agrees with the spec" in good
    bad = render_page(case.workload, observe(case.workload, load_target("conformance/mutants/victim_first.py", None)))
    sections = outline(bad).sections
    assert [s["data-step"] for s in sections if "diverges" in s["class"]][0] == "2"
    assert bad.count('class="badge">first divergence') == 1


def test_a_hundred_step_trace_is_under_a_megabyte():
    w = make_workload(Config(8, 2, 2, 3), [Request(f"r{i}", 3, 12, arrival=1 + 4 * i) for i in range(12)])
    steps = len(run_workload(w).steps)
    assert steps >= 100
    page = render_page(w, observe(w, load_target("impl", None)))
    assert len(page.encode()) < 1_000_000


def test_a_colour_is_the_sum_of_its_ids_characters_mod_360_and_an_id_of_2_16_characters_renders():
    """hue() once summed ord(c) * 31**i in integers of 2**16 * 5 bits: 90 s of the grader's own CPU per id of
    2**16 characters, for every cell of a dashboard page, after every sandbox's limit (a round-4 attack)."""
    from conformance.viewer.page import hue

    for seq_id in ("", "a", "a1", "s0", "é名\u200b", "x" * 33):
        assert hue(seq_id) == sum(ord(c) * 31 ** i for i, c in enumerate(seq_id)) % 360
    long_id = "i" * (2**16 + 1)
    w = make_workload(Config(4, 2, 2, 4), [Request(long_id, 2, 2)])
    page = render_page(w, observe(w, load_target("impl", None)))
    assert page.count(f"--h:{hue(long_id)}") > 1 and len(page) < 2**24


def test_a_page_stays_small_whatever_the_run_long_ids_long_runs_crowds():
    """A class dashboard links a page per entry: one built from a run of 2**11 steps, ids of 2**16 characters or a
    crowd of 2**11 sequences was megabytes (15.6 MB for one entry), each id repeated in every cell."""
    from conformance.workloads import reach

    long_ids = reach.long_ids(16)  # ids of 2**16 - 1 to 2**16 + 2 characters
    for w, most in ((reach.blocked_head(2**11 + 1), 2**16), (long_ids, 2**16)):  # a crowd: the test below
        page = render_page(w, observe(w, load_target("impl", None)))
        assert len(page.encode()) < most, (w.name, len(page.encode()))
        longest = max((r.seq_id for r in w.requests), key=len)
        assert len(longest) <= 2**8 or page.count(longest[:2**8]) <= 1, "a long id is named in full once at most"
    ids = [r.seq_id for r in long_ids.requests]
    shown = [Names(ids)(i) for i in ids]
    assert len(set(shown)) == len(ids) and max(map(len, shown)) < 2**6, "distinct ids keep distinct short names"


def test_a_long_run_shows_its_first_steps_and_those_around_the_divergence_and_says_so():
    from conformance.workloads import reach

    w = reach.blocked_head(2**10 + 1)
    raw = drive(w, load_target("impl", None))
    k = 700
    raw["steps"][k - 1]["schedule"] = [["x", 1]]  # the submission leaves the spec's path at step k
    observed = Observed.from_json(raw)
    o = outline(render_page(w, observed))
    steps = [int(s["data-step"]) for s in o.sections]
    assert steps[:3] == [1, 2, 3] and k in steps and len(steps) < 2**5, steps
    page = render_page(w, observed)
    assert f"this page shows {len(steps)} of them" in page and "left out" in page


def test_the_viewer_docs_give_the_pages_limits_as_the_code_has_them() -> None:
    from pathlib import Path

    from conformance.viewer import page

    text = " ".join((Path(page.__file__).parent.parent / "docs" / "viewer.md").read_text().split())
    assert f"a run of more than {page.PAGE_STEPS} steps" in text
    assert f"a step lists at most {page.PAGE_SEQS} sequences" in text
    assert f"an id longer than {page.ID_SHOWN} characters" in text
    assert f"cut to {page.MAX_SHOWN} characters" in text
    assert f"a strip draws at most {page.PAGE_CELLS} runs of blocks" in text
    from conformance.drivers import LONGEST_RUN
    assert LONGEST_RUN == 2**16 and "a workload whose run takes more than 2^16 steps" in text


def test_every_list_a_step_shows_is_capped_so_a_crowd_of_2_8_over_24_steps_stays_under_half_a_mebibyte():
    """Each shown step drew every block of a crowd as a cell, listed every reason and every id in its queues and
    batch: a 200 KB workload file of 4,000 requests made a page of 72 MB (found by an outside attacker)."""
    n, steps = 2**8 + 1, 24
    w = make_workload(Config(num_blocks=2 * n, block_size=64, max_num_seqs=n, max_num_batched_tokens=4 * n),
                      [Request(f"s{i}", 2, steps) for i in range(n)])
    page = render_page(w, observe(w, load_target("impl", None)))
    assert len(run_workload(w).steps) >= steps
    assert len(page.encode()) < 2**19, len(page.encode())
    assert "not drawn: more than 256 runs of blocks" in page and "more characters" in page and "... and" in page
