"""Grading a class end to end through `schedcheck grade`: the sandbox, the corpus, the rubric, the files.

The default run grades a small class (the reference, two mutants, three hostile
submissions, an empty folder); the slow run grades impl, every catalog mutant and
every hostile case, as the grading acceptance asks.
"""

import json
import shutil
from pathlib import Path

import pytest

from conformance.catalog import CATALOG
from conformance.cli import main
from conformance.grading.calibrate import flatten
from conformance.grading.outputs import validate_gradescope
from conformance.grading.rubric import DEFAULT_RUBRIC

pytestmark = pytest.mark.long  # a class graded once for the module: CI runs it after the README's command

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "grading" / "hostile"
CORRECT = ROOT / "impl" / "scheduler.py"


def tight_rubric(tmp_path, explore=False):
    text = DEFAULT_RUBRIC.read_text()
    text = text.replace("workload_seconds = 2.0", "workload_seconds = 1.0").replace("max_timeouts = 20",
                                                                                     "max_timeouts = 5")
    text = text.replace("enabled = true", f"enabled = {str(explore).lower()}")
    path = tmp_path / "rubric.toml"
    path.write_text(text)
    return path


def hostile(name):
    return CORRECT.read_text() + "\n\n" + (HOSTILE / f"{name}.py").read_text()


def grade(subs, out, rubric, *extra):
    code = main(["grade", str(subs), "--out", str(out), "--rubric", str(rubric), "--jobs", "2", *extra])
    unusable = "not graded" in (out / "summary.csv").read_text()
    assert code == (3 if unusable else 0), code  # 3: every entry graded or refused, some refused
    return {d.name: json.loads((d / "grade.json").read_text()) for d in sorted(out.iterdir()) if d.is_dir()}


def results(out, name):
    obj = json.loads((out / name / "results.json").read_text())
    assert validate_gradescope(obj) == []
    obj.pop("execution_time")
    return obj


@pytest.fixture(scope="module")
def small_class(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("class")
    subs = tmp / "subs"
    subs.mkdir()
    shutil.copy(ROOT / "impl" / "scheduler.py", subs / "impl.py")
    for bug in ("preempt_to_tail", "phase2_continue"):
        (subs / f"{bug}.py").write_text(flatten(bug))
    for name in ("infinite_loop", "import_reference", "output_flood"):
        (subs / f"hostile_{name}").mkdir()
        (subs / f"hostile_{name}" / "p07_scheduler.py").write_text(hostile(name))
    (subs / "empty_folder").mkdir()
    rubric = tight_rubric(tmp)
    out = tmp / "out"
    return subs, out, rubric, grade(subs, out, rubric)


def test_the_correct_submission_gets_full_marks(small_class):
    _, out, _, grades = small_class
    assert grades["impl"]["score"] == 100 and grades["impl"]["diagnosis"] == []
    assert results(out, "impl")["score"] == 100


@pytest.mark.parametrize("bug", ["preempt_to_tail", "phase2_continue"])
def test_a_mutant_loses_points_and_is_diagnosed(small_class, bug):
    _, out, _, grades = small_class
    g = grades[bug]
    assert 0 < g["score"] < 100
    assert any(d.startswith(bug + ":") for d in g["diagnosis"])
    report = (out / bug / "report.md").read_text()
    assert "First counterexample" in report and "◀" in report
    assert json.loads((out / bug / "counterexample.json").read_text())["format"] == "schedcheck/workload"


def test_hostile_submissions_get_their_score_and_cause(small_class):
    _, out, _, grades = small_class
    loop = grades["hostile_infinite_loop"]
    statuses = {i["status"] for i in loop["items"]}
    assert loop["score"] == 0 and "timeout" in statuses and statuses <= {"timeout", "crashed"}
    assert "runs timed out (each may take 1 s" in loop["notes"][0]
    refused = grades["hostile_import_reference"]
    assert refused["score"] == 0 and "import of 'spec' refused" in " ".join(refused["notes"])
    flood = grades["hostile_output_flood"]
    assert flood["score"] == 100 and any("stdout truncated" in n for n in flood["notes"])
    assert grades["empty_folder"]["score"] == 0 and "holds no p07_scheduler.py" in grades["empty_folder"]["notes"][0]


def test_class_summary_has_every_entry(small_class):
    subs, out, _, _ = small_class
    rows = (out / "summary.csv").read_text().splitlines()
    assert len(rows) == 1 + len(list(subs.iterdir()))
    assert "## Most common diagnosed bugs" in (out / "overview.md").read_text()


def test_grading_again_gives_identical_results(small_class, tmp_path):
    subs, out, rubric, _ = small_class
    again = tmp_path / "again"
    grade(subs, again, rubric)
    for d in out.iterdir():
        if d.is_dir():
            assert results(out, d.name) == results(again, d.name), d.name
            assert (out / d.name / "grade.json").read_bytes() == (again / d.name / "grade.json").read_bytes()


@pytest.mark.slow
def test_impl_every_mutant_and_every_hostile_case_grade_to_completion(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(ROOT / "impl" / "scheduler.py", subs / "impl.py")
    for bug in CATALOG:
        (subs / f"{bug.name}.py").write_text(flatten(bug.name))
    for path in sorted(HOSTILE.glob("*.py")):
        (subs / f"hostile_{path.stem}.py").write_text(hostile(path.stem))
    grades = grade(subs, tmp_path / "out", tight_rubric(tmp_path))
    assert grades["impl"]["score"] == 100
    for bug in CATALOG:
        assert grades[bug.name]["score"] < 100, bug.name
    zero = ("infinite_loop", "sleep_forever", "memory_bomb", "import_reference", "no_scheduler", "import_loop")
    for name in zero:
        assert grades[f"hostile_{name}"]["score"] == 0, name
    # these misbehave only on some calls (say, when n would be 1): the cases they never reach still pass
    for name in ("wrong_type", "negative_n", "float_n", "bool_n", "unknown_id", "forge_report", "replace_lists",
                 "lying_dict", "idle", "hang_on_a1", "setsid_grandchild", "sys_exit", "os_exit", "base_exception",
                 "segfault", "fork_bomb"):
        assert grades[f"hostile_{name}"]["score"] < 100, name
        assert grades[f"hostile_{name}"]["notes"] or any(i["status"] != "passed"
                                                         for i in grades[f"hostile_{name}"]["items"]), name
    for name in ("output_flood", "monkeypatch_builtins", "results_json"):
        assert grades[f"hostile_{name}"]["score"] == 100, name


def test_grading_under_a_policy_judges_every_case_by_it(tmp_path):
    """The card's reference loses points under vllm-v1 and the vllm-v1 mutant gets them all; the record says so."""
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(CORRECT, subs / "impl.py")
    v1 = flatten("no_admission_after_preemption")  # the card with vLLM v1's first difference; default policy v1
    assert v1.count("DEFAULT_POLICY = Policy()") == 1
    (subs / "v1.py").write_text(v1.replace("DEFAULT_POLICY = Policy()", 'DEFAULT_POLICY = Policy("vllm-v1")'))
    rubric = tight_rubric(tmp_path)
    grades = grade(subs, tmp_path / "out", rubric, "--policy", "vllm-v1")
    assert grades["v1"]["score"] == 100 and grades["v1"]["policy"] == "vllm-v1", grades["v1"]["diagnosis"]
    assert grades["impl"]["score"] < 100
    assert any(d.startswith("policy:p07:") for d in grades["impl"]["diagnosis"]), grades["impl"]["diagnosis"]
    assert "Judged under policy `vllm-v1`" in (tmp_path / "out" / "impl" / "report.md").read_text()
    card = grade(subs, tmp_path / "card", rubric)  # the same rubric under the card: the other way round
    assert card["impl"]["score"] == 100 and card["v1"]["score"] < 100 and card["v1"]["policy"] == "p07"
    assert card["impl"]["rubric_sha256"] != grades["impl"]["rubric_sha256"]  # a regrade never mixes policies
