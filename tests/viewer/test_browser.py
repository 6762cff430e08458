"""The pages in a real browser: headless Chromium steps through them as a person would.

Needs Chromium and its driver from the distribution (`apt-get install chromium
chromium-driver`) and the selenium package; skipped, saying which is missing, where
they are not installed.
"""

import shutil
import tempfile
from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.drivers import run_workload as drive
from conformance.observed import Observed
from conformance.viewer.page import render_page
from conformance.viewer.strips import spec_strips
from spec.golden import case_named, golden_cases
from spec.trace import run_workload


def observe(*args, **kwargs):
    """The run as the viewer takes it: the driver's observed trace, read into its classes."""
    return Observed.from_json(drive(*args, **kwargs))

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="headless Chromium or chromedriver is not "
                                "installed (apt-get install chromium chromium-driver)")
ROOT = Path(__file__).resolve().parents[2]
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1200,1000")


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="schedcheck-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def open_page(browser, tmp_path, page, name="page.html"):
    path = tmp_path / name
    path.write_text(page)
    browser.get(path.as_uri())
    return browser


def visible_sections(browser):
    return [s for s in browser.find_elements("css selector", "section.step") if s.is_displayed()]


def seen_strips(section):
    """The strips a person sees in a step, cell by cell, folded runs unfolded."""
    rows = []
    for strip in section.find_elements("css selector", ".strip"):
        cells = []
        for cell in strip.find_elements("css selector", ".blk"):
            cells += [cell.get_attribute("data-seq") or None] * int(cell.get_attribute("data-count"))
        rows.append(tuple(cells))
    return rows


def press(browser, key):
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys(key).perform()


@pytest.mark.long
@pytest.mark.parametrize("case", golden_cases(), ids=lambda c: c.name)
def test_stepping_through_a_card_case_shows_one_step_at_a_time_with_the_cards_strips(browser, tmp_path, case):
    from selenium.webdriver.common.keys import Keys

    trace = run_workload(case.workload)
    open_page(browser, tmp_path, render_page(case.workload))
    for i, strips in enumerate(spec_strips(trace)):
        shown = visible_sections(browser)
        assert [s.get_attribute("data-step") for s in shown] == [str(i + 1)]
        assert seen_strips(shown[0]) == [strips.after_schedule, strips.after_update]
        assert browser.find_element("id", "where").text == f"step {i + 1} of {len(trace.steps)}"
        press(browser, Keys.ARROW_RIGHT)
    assert browser.current_url.endswith(f"#step={len(trace.steps)}")


def test_a_counterexample_opens_at_its_first_divergence_and_the_keys_move_through_it(browser, tmp_path):
    from selenium.webdriver.common.keys import Keys

    w = case_named("example2").workload
    buggy = load_target(str(ROOT / "examples/p07_buggy/p07_scheduler.py"), None)
    open_page(browser, tmp_path, render_page(w, observe(w, buggy), title="example2 vs p07_buggy"))
    shown = visible_sections(browser)
    assert [s.get_attribute("data-step") for s in shown] == ["2"]  # output cleared on preemption shows at step 2
    assert shown[0].find_element("css selector", ".badge").text == "first divergence"
    assert "diff" in shown[0].find_element("css selector", "table.seqs td.diff").get_attribute("class")
    press(browser, Keys.HOME)
    assert [s.get_attribute("data-step") for s in visible_sections(browser)] == ["1"]
    press(browser, Keys.END)
    step4 = visible_sections(browser)[0]
    assert step4.get_attribute("data-step") == "4"
    assert step4.find_element("css selector", "tr.submission td.batch").text == "{a2: 3}"
    assert "diff" in step4.find_element("css selector", "tr.submission td.batch").get_attribute("class")
    press(browser, "d")
    assert [s.get_attribute("data-step") for s in visible_sections(browser)] == ["2"]
    browser.find_element("css selector", '.ribbon .tick[data-step="3"]').click()
    assert [s.get_attribute("data-step") for s in visible_sections(browser)] == ["3"]


def test_the_class_dashboard_links_each_student_to_their_counterexample(browser, tmp_path):
    from conformance.viewer.dashboard import write_dashboard
    from tests.viewer.test_dashboard import counterexample, grade

    grades = [grade("alice", 1.0), grade("bob", 0.5, ["preempt_clears_output"], counterexample())]
    for g in grades:
        (tmp_path / g.submission).mkdir()
    write_dashboard(tmp_path, grades)
    browser.get((tmp_path / "overview.html").as_uri())
    bars = browser.find_elements("css selector", "svg.hist rect.bar")
    assert [b.get_attribute("data-count") for b in bars] == ["0", "0", "0", "0", "0", "1", "0", "0", "0", "1"]
    assert all(b.is_displayed() for b in bars if b.get_attribute("data-count") != "0")
    browser.find_element("link text", "bob").click()
    shown = visible_sections(browser)
    assert [s.get_attribute("data-step") for s in shown] == ["2"]
    assert "P2.stop" in browser.find_element("css selector", ".verdict").text


def test_a_long_runs_page_steps_by_step_number_through_the_steps_it_holds(browser, tmp_path):
    """A run of more than PAGE_STEPS steps keeps only some sections: the stepper names the real step, `d` and
    #step=N find a step by its number, never by its position."""
    from conformance.workloads import reach

    w = reach.blocked_head(2**10 + 1)
    raw = drive(w, load_target("impl"))
    raw["steps"][699]["schedule"] = [["x", 1]]  # the submission leaves the spec's path at step 700
    observed = Observed.from_json(raw)
    total = len(run_workload(w).steps)
    open_page(browser, tmp_path, render_page(w, observed))
    [section] = visible_sections(browser)
    assert section.get_attribute("data-step") == "700"  # opens at the first divergence
    assert browser.find_element("id", "where").text == f"step 700 of {total}"
    press(browser, "j")
    assert visible_sections(browser)[0].get_attribute("data-step") == "701"
    press(browser, "d")
    assert visible_sections(browser)[0].get_attribute("data-step") == "700"
    browser.get((tmp_path / "page.html").as_uri() + "#step=2")
    browser.refresh()
    assert visible_sections(browser)[0].get_attribute("data-step") == "2"
