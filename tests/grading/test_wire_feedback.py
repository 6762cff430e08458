"""What a student reads about a wire program: reruns that name its command, and one status per item everywhere.

The program is examples/wire/scheduler.py with one bug: its `update` replies never name a finished
sequence (the program's own state is right). Graded by `schedcheck grade`, its report must give
`schedcheck replay counterexample.json --wire 'python3 scheduler.py'` and a pytest file that replays the
case through that command (never p07_scheduler.py), both reproducing the finding; and each item must
show one status in report.md, results.json, junit.xml, grade.json and the dashboard. Runs that never
finish (the suite waits for sequences the program never reports) stop after 64 empty batches, or time out
first on a slow machine, so the rubric here stops after two hangs: the rest count as timeouts, which is what
made every item read `timeout` before.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.cli import main
from conformance.drivers import run_workload
from conformance.grading.observe import Case, judge_case, observed_trace
from conformance.grading.outputs import (
    STATUSES,
    Grade,
    ItemResult,
    gradescope_results,
    gradescope_status,
    junit_xml,
    report_md,
)
from conformance.grading.rubric import DEFAULT_RUBRIC, load_rubric
from conformance.grading.scoring import score_item
from conformance.sandbox.types import WorkloadResult
from spec.golden import case_named
from spec.model import Config
from spec.trace import Request, make_workload

pytestmark = pytest.mark.long  # a wire program graded once for the module: CI runs it after the README's command

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "wire" / "scheduler.py"
COMMAND = "python3 scheduler.py"
REPLAY = f"schedcheck replay counterexample.json --wire '{COMMAND}'"
needs_python3 = pytest.mark.skipif(not shutil.which("python3", path="/usr/bin:/bin"),
                                   reason="the sandbox runs wire programs with the system's python3")


def buggy_program(folder: Path) -> Path:
    """The example with one bug: update() replies `{"finished": []}` whatever finished."""
    folder.mkdir(parents=True)
    text = EXAMPLE.read_text()
    right = '        return {"finished": sched.update(sample)}'
    assert right in text
    (folder / "scheduler.py").write_text(text.replace(right, '        sched.update(sample)\n'
                                                             '        return {"finished": []}'))
    (folder / "wire.toml").write_text(f'command = "{COMMAND}"\n')
    return folder


def fast_rubric(path: Path) -> Path:
    """The bundled rubric on the corpus alone (no held-out cases, no exploration), stopping after two hangs."""
    text = DEFAULT_RUBRIC.read_text()
    for old, new in (("enabled = true", "enabled = false"), ("count = 120", "count = 0"),
                     ("max_timeouts = 20", "max_timeouts = 2")):
        assert old in text, old
        text = text.replace(old, new, 1)
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """The graded entry's folder (report.md, results.json, junit.xml, grade.json, counterexample.json)."""
    base = tmp_path_factory.mktemp("wire-feedback")
    buggy_program(base / "class" / "lost_finish")
    rubric = fast_rubric(base / "rubric.toml")
    assert main(["grade", str(base / "class"), "--out", str(base / "out"), "--rubric", str(rubric)]) == 0
    return base / "out" / "lost_finish"


# --- the rerun names the command, and reproduces the finding -----------------------------------------------


@needs_python3
def test_the_report_of_a_wire_program_replays_it_through_its_command(graded: Path) -> None:
    report = (graded / "report.md").read_text()
    assert "p07_scheduler" not in report
    replays = [line for line in report.splitlines() if line.startswith("Replay it:")]
    assert len(replays) == 8 and all(f"`{REPLAY}`" in line for line in replays), replays  # 7 items, then the first
    results = json.loads((graded / "results.json").read_text())
    assert "p07_scheduler" not in json.dumps(results)
    assert any(REPLAY in t["output"] for t in results["tests"])


def blocks(markdown: str, lang: str) -> list[str]:
    return [m[1] for m in re.findall(rf"^(`{{3,}}){lang}\n(.*?)\n\1$", markdown, re.S | re.M)]


@needs_python3
def test_the_replay_and_the_pytest_file_reproduce_the_finding_in_the_programs_folder(graded: Path,
                                                                                      tmp_path: Path) -> None:
    """The first item's case, saved as its output says, fails on the program and passes once the bug is fixed."""
    report = (graded / "report.md").read_text()
    case, repro = blocks(report, "json")[0], blocks(report, "python")[0]
    assert f"TARGET = {COMMAND!r}" in repro and "ADAPTER = 'conformance.wire'" in repro
    replay = re.search(r"`(schedcheck replay [^`]+)`", report)
    assert replay is not None and replay.group(1) == REPLAY
    for name, fixed in (("buggy", False), ("fixed", True)):
        folder = buggy_program(tmp_path / name)
        if fixed:
            shutil.copy(EXAMPLE, folder / "scheduler.py")
        (folder / "counterexample.json").write_text(case)
        (folder / "test_counterexample.py").write_text(repro)
        ran = subprocess.run([sys.executable, "-m", "conformance", *shlex.split(REPLAY)[1:]], cwd=folder,
                             capture_output=True, text=True, timeout=300)
        assert ran.returncode == (0 if fixed else 1), ran.stdout + ran.stderr
        test = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "test_counterexample.py"], cwd=folder, capture_output=True, text=True, timeout=300)
        assert test.returncode == (0 if fixed else 1), test.stdout + test.stderr
        assert fixed or "U.finish" in test.stdout, test.stdout


# --- one status per item ---------------------------------------------------------------------------------


def shown_statuses(folder: Path) -> dict[str, dict[str, str]]:
    """Each item's status as every output of the entry shows it, by item id (every list is in rubric order)."""
    report = (folder / "report.md").read_text()
    rows = re.findall(r"^\| .+? \| [\d.]+ / [\d.]+ \| (.+?) \|$", report, re.M)
    heads = re.findall(r"^## .+?: [\d.]+ / [\d.]+ \((.+?)\)$", report, re.M)
    tests = json.loads((folder / "results.json").read_text())["tests"]
    junit = {c.get("name"): c for c in ET.parse(folder / "junit.xml").getroot().iter("testcase")}
    grade = {i["id"]: i["status"] for i in json.loads((folder / "grade.json").read_text())["items"]}
    assert len(rows) == len(heads) == len(tests) == len(grade)
    out: dict[str, dict[str, str]] = {}
    for row, head, t in zip(rows, heads, tests, strict=True):
        item = t["tags"][0]
        element = next(iter(junit[item]), None)
        word = re.fullmatch(r"Status: \*\*(.+)\*\*\.", t["output"].split("\n", 1)[0])
        out[item] = {"report row": row, "report heading": head, "results.json tag": t["tags"][1],
                     "results.json output": word.group(1) if word else t["status"],
                     "junit": "passed" if element is None else str(element.get("type")), "grade.json": grade[item]}
        assert (None if element is None else element.tag) == {"passed": None, "failed": "failure"}.get(grade[item],
                                                                                                       "error")
        assert t["status"] == gradescope_status(grade[item])
    return out


@needs_python3
def test_every_output_shows_one_status_per_item_and_wrong_update_replies_are_failed(graded: Path) -> None:
    shown = shown_statuses(graded)
    for item, views in shown.items():
        assert len(set(views.values())) == 1, (item, views)
    assert {views["grade.json"] for views in shown.values()} == {"failed"}, shown  # not "timeout"
    report = (graded / "report.md").read_text()
    noted = [n for n in json.loads((graded / "grade.json").read_text())["notes"] if "timed out" in n]
    # a run that never finishes stops after 64 empty batches (stalled: failed); one slower than its time limit
    # first, or skipped after the rubric's two hangs, is a timeout, named in a note wherever it is shown
    assert ("runs timed out (each may take" in report) == bool(noted), noted
    overview = (graded.parent / "overview.html").read_text()
    assert 'aria-label="0 of 1"' in overview  # the dashboard's pass rates: no item passed


def test_each_status_reads_the_same_in_report_results_and_junit() -> None:
    rubric = load_rubric()
    items = tuple(ItemResult(item, 0.0, status, f"why {status}")
                  for item, status in zip(rubric.items, STATUSES, strict=False))
    g = Grade("someone", rubric, items, "process-group")
    report = report_md(g)
    results = gradescope_results(g, stable=True)["tests"]
    junit = {c.get("name"): c for c in ET.fromstring(junit_xml(g)).iter("testcase")}
    for r, t in zip(items, results, strict=True):
        assert f"| {r.status} |" in report and f"({r.status})" in report
        assert t["tags"][1] == r.status and t["status"] == gradescope_status(r.status)
        assert t["output"].startswith(f"Status: **{r.status}**.") == (r.status not in ("passed", "failed"))
        element = next(iter(junit[r.item.id]), None)
        assert (element is None) == (r.status == "passed")
        assert element is None or element.get("type") == r.status


def test_an_item_has_the_status_of_its_smallest_failing_case_not_a_timeout_elsewhere() -> None:
    """A wrong result on a small case and a timeout on a bigger one: the item shows the wrong result, as failed."""
    rubric = load_rubric()
    item = next(i for i in rubric.items if i.id == "differential")
    golden = case_named("example2")
    small = Case("golden/example2", golden.workload, ("golden",), golden)
    big = Case("edge/big", make_workload(Config(8, 2, 4, 8), [Request(f"r{i}", 3, 2) for i in range(4)]), ())
    wrong = run_workload(small.workload, load_target(str(ROOT / "conformance/mutants/victim_first.py")))
    results = (WorkloadResult(0, "small", "ok", ""), WorkloadResult(1, "big", "not_run", "not run"))
    observed = [wrong, observed_trace(big.workload, results[1])]
    verdicts = [judge_case(c, o, None, None) for c, o in zip((small, big), observed, strict=True)]
    result = score_item(item, rubric, (small, big), verdicts, [{}, {}], results, observed)
    assert result.score == 0 and result.status == "failed", result.status
    assert "Case `golden/example2`" in result.output


def test_a_hostile_command_stays_inert_and_the_test_file_still_runs_it() -> None:
    """The command is the student's text: escaped wherever it shows, and the pytest file holds it exactly."""
    from conformance.grading.feedback import counterexample_md
    from tests.rubric.test_escape import EVIL, RAW, assert_inert

    command = EVIL[:300] + " ' \\ \"\"\" `x`"
    golden = case_named("example2")
    case = Case("golden/example2", golden.workload, ("golden",), golden)
    observed = run_workload(case.workload, load_target(str(ROOT / "conformance/mutants/victim_first.py")))
    finding = next(f for f in judge_case(case, observed, None, None).values() if f is not None)
    shown = counterexample_md(case, observed, finding, command)
    assert_inert("an item's output", shown, [r for r in RAW if r not in ("z" * 400, "\ufffe")])
    repro = ast.parse(blocks(shown, "python")[0])
    target = next(n.value for n in repro.body if isinstance(n, ast.Assign) and n.targets[0].id == "TARGET")
    assert ast.literal_eval(target) == command  # repr() escapes the controls, so the code block holds it exactly
