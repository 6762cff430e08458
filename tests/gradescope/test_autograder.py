"""The Gradescope autograder end to end, as Gradescope runs it: the real zip, unpacked into a temporary root.

make_zip.sh builds the zip; it is unpacked to ROOT/source; run_autograder runs as root with
AUTOGRADER_ROOT pointing at ROOT and SCHEDCHECK_PYTHON at this interpreter (nothing is
installed), grading with the zip's own copy of schedcheck (PYTHONPATH). Each submission gets a
fresh root. What is asserted is what a student sees: the scores, the visibility of each field,
the feedback, and that nothing of the grader (rubric, metadata, reference) ever shows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GRADESCOPE = REPO / "examples" / "gradescope"
CORRECT = (REPO / "impl" / "scheduler.py").read_text()
BUGGY = (REPO / "examples" / "p07_buggy" / "p07_scheduler.py").read_text()
SYNTAX = "import os\n\n\ndef broken(:\n    return 1\n"
SECRET = "SECRET-METADATA-7f3a"  # planted in submission_metadata.json: must never reach a student
RUBRIC_MARKS = ("item_seconds", "max_timeouts", "after_published")  # words only the rubric file holds
HIDDEN_ITEM = "Full differential check"
HELD_OUT_SEED = os.environ["SCHEDCHECK_HELD_OUT_SEED"]  # tests/conftest.py's; make_zip.sh puts it in the image

# reads the reference (or any Scheduler) from the image and runs it as its own
STEAL = '''
import os
ROOT = {root!r}
found = None
for folder, _, files in os.walk(ROOT):  # folders it may not enter are skipped silently
    for name in files:
        path = os.path.join(folder, name)
        try:
            text = open(path).read()
        except (OSError, UnicodeDecodeError):
            continue
        if name.endswith(".py") and name != "p07_scheduler.py" and "class Scheduler" in text:
            found = path
if found is None:
    raise ImportError("nothing to steal under " + ROOT)
exec(compile(open(found).read(), found, "exec"))
'''
# puts the grader's files into its exception message, which the student is shown
LEAK = '''
ROOT = {root!r}
taken = []
for path in (ROOT + "/source/schedcheck/conformance/grading/rubric.toml", ROOT + "/submission_metadata.json",
             ROOT + "/source/setup.sh", ROOT + "/source/held_out_seed"):
    try:
        taken.append(open(path).read()[:400])
    except OSError as e:
        taken.append(type(e).__name__)
raise RuntimeError("LEAK " + " | ".join(taken))
'''


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """The autograder zip, built by make_zip.sh with a relative output path from another folder."""
    where = tmp_path_factory.mktemp("zip")
    done = subprocess.run(["sh", str(GRADESCOPE / "make_zip.sh"), "out/autograder.zip"], cwd=where, text=True,
                          capture_output=True, check=False, env={**os.environ, "TMPDIR": str(where)})
    assert done.returncode == 2 and "does not exist" in done.stderr  # the folder must exist first
    (where / "out").mkdir()
    with zipfile.ZipFile(where / "out" / "autograder.zip", "w") as old:
        old.writestr("stale.txt", "from an older build")  # rebuilt from scratch: this must go
    done = subprocess.run(["sh", str(GRADESCOPE / "make_zip.sh"), "out/autograder.zip"], cwd=where, text=True,
                          capture_output=True, check=True, env={**os.environ, "TMPDIR": str(where)})
    path = where / "out" / "autograder.zip"
    assert done.stdout.strip() == f"wrote {path}"
    assert sorted(p.name for p in where.iterdir()) == ["out"]  # nothing left behind
    return path


def run(image: Path, files: dict[str, str], isolation: str | None = None) -> dict:
    """Unpack the zip into a fresh root, put `files` in its submission folder, run run_autograder."""
    base = Path(tempfile.mkdtemp(prefix="schedcheck-gs-test-"))
    try:
        os.chmod(base, 0o755)  # reachable by anyone: only run_autograder's own permissions protect the image
        root, tmp = base / "autograder", base / "tmp"
        for d in (root / "source", root / "submission", tmp):
            d.mkdir(parents=True)
        os.chmod(tmp, 0o755)
        with zipfile.ZipFile(image) as z:
            z.extractall(root / "source")
        for name, text in files.items():
            (root / "submission" / name).write_text(text.format(root=str(root)) if "{root" in text else text)
        (root / "submission_metadata.json").write_text(json.dumps({"users": [{"email": SECRET}]}))
        env = {**os.environ, "AUTOGRADER_ROOT": str(root), "SCHEDCHECK_PYTHON": sys.executable, "TMPDIR": str(tmp),
               "PYTHONPATH": str(root / "source" / "schedcheck")}
        env.pop("SCHEDCHECK_ISOLATION", None)
        if isolation:
            env["SCHEDCHECK_ISOLATION"] = isolation
        done = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, text=True,
                              capture_output=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr
        assert list(tmp.iterdir()) == []  # no temporary folder, no sandbox folder, no .hypothesis/ left behind
        results = json.loads((root / "results" / "results.json").read_text())
        if os.geteuid() == 0:
            assert (root / "source" / "schedcheck").stat().st_mode & 0o077 == 0  # the image: root only
        return {"results": results, "stdout": done.stdout}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def visible(results: dict) -> str:
    """Everything a student sees before grades are published."""
    parts = [results.get("output", ""), str(results.get("score", ""))] if results.get("visibility", "visible") \
        == "visible" else []
    for t in results.get("tests", []):
        if t.get("visibility", results.get("visibility", "visible")) == "visible":
            parts += [t.get("name", ""), t.get("output", ""), t.get("status", ""), str(t.get("score", ""))]
    return "\n".join(parts)


def assert_nothing_secret(run_result: dict) -> None:
    """No planted secret, rubric text, reference code or held-back item in any field a student sees."""
    results, text = run_result["results"], visible(run_result["results"])
    assert results["stdout_visibility"] == "hidden"
    assert run_result["stdout"] == "schedcheck: graded; results.json written\n"  # no score in stdout either
    for secret in (SECRET, *RUBRIC_MARKS, HIDDEN_ITEM, "class Scheduler", "apt-get", HELD_OUT_SEED):
        assert secret not in text, secret
    held = [t["name"] for t in results["tests"] if t["visibility"] != "visible"]
    assert held == [HIDDEN_ITEM + " against the spec on the whole corpus"]


@pytest.fixture(scope="module")
def graded(image):
    """Every kind of submission, graded at the best isolation level this machine has, two at a time.

    The correct one costs as much as the buggy one and is graded in the slow tests only
    (tests/rubric grades the correct impl to 100 by default).
    """
    kinds = {"buggy": {"p07_scheduler.py": BUGGY}, "syntax": {"p07_scheduler.py": SYNTAX},
             "misnamed": {"scheduler.py": BUGGY, "notes.txt": "hi"}, "steal": {"p07_scheduler.py": STEAL},
             "leak": {"p07_scheduler.py": LEAK}}
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(kinds, pool.map(lambda files: run(image, files), kinds.values()), strict=True))
    return done


@pytest.mark.long
def test_the_zip_holds_what_grading_needs_and_no_solution(image):
    names = zipfile.ZipFile(image).namelist()
    assert {"setup.sh", "run_autograder", "constraints.txt", "schedcheck/pyproject.toml",
            "schedcheck/conformance/grading/rubric.toml", "schedcheck/spec/rules.py"} <= set(names)
    assert not [n for n in names if re.search(r"mutants/|impl/|tests/|selfcheck/|reference|__pycache__|stale", n)]
    with zipfile.ZipFile(image) as z:
        assert not [n for n in names if n.endswith(".py") and re.search(rb"^class Scheduler\b", z.read(n), re.M)]
        pins = z.read("constraints.txt").decode().split()
        assert z.read("held_out_seed").decode().strip() == HELD_OUT_SEED  # the one it was built with
    assert any(p.startswith("hypothesis==") for p in pins)


def test_the_default_zip_path_is_ignored_by_git():
    done = subprocess.run(["git", "check-ignore", "-q", "autograder.zip"], cwd=REPO, check=False)
    assert done.returncode == 0


@pytest.mark.slow
def test_a_correct_submission_gets_full_marks_and_sees_only_visible_items(image):
    correct = run(image, {"p07_scheduler.py": CORRECT})
    r = correct["results"]
    assert r["score"] == 100 and all(t["status"] == "passed" for t in r["tests"])
    assert r["output"].startswith("**85 / 85** on the items shown now; 1 more item(s) are shown later")
    assert_nothing_secret(correct)


@pytest.mark.long
def test_a_buggy_submission_sees_a_counterexample_it_can_replay(graded, tmp_path):
    r = graded["buggy"]["results"]
    assert 0 < r["score"] < 100 and r["score"] == round(sum(t["score"] for t in r["tests"]), 2)
    assert_nothing_secret(graded["buggy"])
    failed = [t for t in r["tests"] if t["status"] == "failed" and t["visibility"] == "visible"]
    assert failed and all(t["output_format"] == "md" for t in r["tests"])
    out = failed[0]["output"]
    assert "### The smallest failing case" in out and "| step | schedule() |" in out and "◀" in out
    assert "What the spec does at step" in out  # the spec's reasons
    repro = re.search(r"```python\n(.*?)\n```", out, re.S).group(1)
    replay = re.search(r"```json\n(.*?)\n```", out, re.S).group(1)
    for name, submission in (("buggy", BUGGY), ("correct", CORRECT)):
        d = tmp_path / name
        d.mkdir()
        (d / "p07_scheduler.py").write_text(submission)
        (d / f"test_{name}_repro.py").write_text(repro)
        (d / "counterexample.json").write_text(replay)
    tested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                             "buggy/test_buggy_repro.py", "correct/test_correct_repro.py"], cwd=tmp_path,
                            capture_output=True, text=True, check=False)
    assert "FAILED buggy/test_buggy_repro.py" in tested.stdout and "PASSED correct/test_correct_repro.py" in \
        tested.stdout, tested.stdout  # the repro fails on the bug and passes on a correct scheduler
    replayed = subprocess.run([sys.executable, "-m", "conformance", "replay", "counterexample.json",
                               "p07_scheduler.py"], cwd=tmp_path / "buggy", capture_output=True, text=True,
                              check=False)
    assert replayed.returncode == 1 and "FAIL" in replayed.stdout


@pytest.mark.long
def test_a_syntax_error_is_shown_once_at_its_line_with_a_caret(graded):
    r = graded["syntax"]["results"]
    assert r["score"] == 0 and {t["status"] for t in r["tests"]} == {"failed"}
    assert "SyntaxError at `p07_scheduler.py:4`" in r["output"]
    assert "    4 | def broken(:\n      |            ^" in r["output"]
    assert "('invalid syntax'" not in visible(r) and "schedcheck-sandbox" not in visible(r)
    assert all("does not load" in t["output"] and "def broken" not in t["output"] for t in r["tests"])
    assert "| (1) Token budget and chunked prefill give the exact schedule | 0 / 20 | does not load |" in r["output"]
    assert_nothing_secret(graded["syntax"])


@pytest.mark.long
def test_a_misnamed_file_lists_what_was_found_and_what_to_rename(graded):
    r = graded["misnamed"]["results"]
    assert r["score"] == 0
    assert "- `notes.txt`\n- `scheduler.py`" in r["output"]
    assert "Rename `scheduler.py` to `p07_scheduler.py`" in r["output"]
    assert "| not submitted |" in r["output"] and "crashed" not in visible(r)


@pytest.mark.long
def test_a_submission_that_reads_the_image_finds_nothing_to_steal(graded):
    r = graded["steal"]["results"]
    assert r["score"] == 0 and "ImportError" in r["output"] and "nothing to steal under" in r["output"]
    assert_nothing_secret(graded["steal"])


@pytest.mark.long
def test_a_submission_that_prints_files_in_its_error_shows_no_file(graded):
    r = graded["leak"]["results"]
    assert r["score"] == 0 and "RuntimeError" in r["output"] and "LEAK" in r["output"]
    assert_nothing_secret(graded["leak"])


@pytest.mark.slow
def test_the_same_submission_gives_the_same_results(graded, image):
    again = run(image, {"p07_scheduler.py": BUGGY})["results"]
    first = dict(graded["buggy"]["results"])
    first.pop("execution_time", None)
    again.pop("execution_time", None)
    assert again == first


@pytest.mark.long
@pytest.mark.skipif(os.geteuid() != 0, reason="the child drops to an unprivileged uid only when the grader is root")
def test_without_namespaces_the_hostile_submissions_still_get_nothing(image):
    """At process-group level (a container without namespaces) the image is protected by permissions alone."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        steal, leak = pool.map(lambda s: run(image, {"p07_scheduler.py": s}, "process-group"), (STEAL, LEAK))
    for got in (steal, leak):
        assert got["results"]["extra_data"]["schedcheck"]["isolation"] == "process-group"
        assert got["results"]["score"] == 0
        assert_nothing_secret(got)
    assert "nothing to steal under" in steal["results"]["output"]
    assert "PermissionError" in leak["results"]["output"]


@pytest.mark.slow
def test_without_namespaces_correct_and_buggy_grade_as_with_namespaces(image, graded):
    with ThreadPoolExecutor(max_workers=2) as pool:
        correct, buggy = pool.map(lambda s: run(image, {"p07_scheduler.py": s}, "process-group"), (CORRECT, BUGGY))
    assert correct["results"]["score"] == 100
    assert buggy["results"]["score"] == graded["buggy"]["results"]["score"]
