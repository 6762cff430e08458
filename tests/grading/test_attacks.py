"""Hostile submissions against `schedcheck grade`: every entry of tests/grading/attacks/EXPECTED.toml.

The attacks (tests/grading/attacks/submissions/*.py and the recipes of recipes.py) try to read
what they must not, share state between classmates, escape the resource limits, crash or hang
the class run, tilt the reports, and detect the grader's probes. Each states what the grader
should do; these tests assert exactly that, so a failing test here is an attack that works.

The slow tests grade the "main" class twice (a regrade must give the same scores) and every
"solo" attack in a class of its own; the cheap test checks that EXPECTED.toml and the attack
files agree. An attack proves an escape by writing a marker under /tmp/schedcheck-attack-markers/
(the only file it writes outside its sandbox on purpose); anything else it leaves in /tmp,
/var/tmp, /dev/shm or System V IPC is a leftover, reported and then removed by the test.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.grading.collect import slug
from tests.grading.attacks.recipes import HONEST, PROJECT, RECIPES, SUBMISSIONS, build_class, expected, is_special

MARKERS = Path("/tmp/schedcheck-attack-markers")
LEFTOVERS = ("/tmp/schedcheck-attack-*", "/var/tmp/schedcheck-attack-*", "/dev/shm/schedcheck-attack-*")
IPC_KEYS = (0x5CED0701, 0x5CED0702)  # the System V keys the attacks use
CLASS_SECONDS = 3600  # a class run that takes longer is a hang
SOLO_SECONDS = 600
KEYS = {"class", "score", "max_score", "min_score", "status", "reason", "must_not", "regrade_same"}
STATUSES = {"passed", "failed", "timeout", "crashed", "not submitted", "does not load"}

EXPECT = expected()
MAIN = sorted(a for a, e in EXPECT.items() if e.get("class") in ("main", "all"))
SOLO = sorted(a for a, e in EXPECT.items() if e.get("class") == "solo")


# --- the cheap check ------------------------------------------------------------------------------------------


def test_expected_covers_every_attack_and_nothing_else() -> None:
    files = {p.stem for p in SUBMISSIONS.glob("*.py")}
    present = files | set(RECIPES) | set(HONEST)
    assert sorted(present - set(EXPECT)) == [], "attacks without an expectation in EXPECTED.toml"
    assert sorted(set(EXPECT) - present) == [], "expectations without an attack file or recipe"
    assert not files & set(RECIPES), "an attack is both a file and a recipe"
    for attack, exp in EXPECT.items():
        assert set(exp) <= KEYS, f"{attack}: unknown keys {sorted(set(exp) - KEYS)}"
        assert exp.get("class") in ("main", "solo", "all"), f"{attack}: class must be main, solo or all"
        assert {"score", "max_score", "min_score"} & set(exp), f"{attack}: needs score, max_score or min_score"
        wanted = exp.get("status", "passed")
        assert set(wanted if type(wanted) is list else [wanted]) <= STATUSES, f"{attack}: unknown status"
        for key in ("reason", "must_not"):
            assert all(type(s) is str and s for s in exp.get(key, [])), f"{attack}: {key} must list strings"
        assert (exp.get("class") == "all") == (attack in HONEST), f"{attack}: only the honest classmates are 'all'"
    for attack in files:
        doc = ast.get_docstring(ast.parse((SUBMISSIONS / f"{attack}.py").read_text()))
        assert doc and "Expected:" in doc, f"{attack}.py: the docstring must say what it tries and what is expected"
    for attack, fn in RECIPES.items():
        assert fn.__doc__ and "Expected:" in fn.__doc__, f"recipe {attack}: the docstring must say what is expected"


# --- running a class ------------------------------------------------------------------------------------------


def unblock_fifos(folder: Path) -> None:
    """Give every FIFO of the class an end of file, so a reader blocked on it returns."""
    for path in folder.rglob("*"):
        if is_special(path) and not path.is_socket():
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def run_grade(class_dir: Path, out: Path, seconds: float) -> tuple[int | None, str]:
    """Grade the class; return (exit code, stderr) or (None, stderr) when it did not finish in time."""
    proc = subprocess.Popen([sys.executable, "-m", "conformance", "grade", str(class_dir), "--out", str(out),
                             "--jobs", "2"], cwd=PROJECT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=seconds)
        return proc.returncode, err.decode(errors="replace")
    except subprocess.TimeoutExpired:
        unblock_fifos(class_dir)
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)  # our own child's session only
        _, err = proc.communicate()
        return None, err.decode(errors="replace")


def markers_of(attack: str) -> list[str]:
    return sorted(p.name for p in MARKERS.glob(f"{attack}.*")) if MARKERS.is_dir() else []


def leftovers() -> list[str]:
    found = [p for pattern in LEFTOVERS for p in glob.glob(pattern) if p != str(MARKERS)]
    libc = ctypes.CDLL(None, use_errno=True)
    found += [f"System V segment {key:#x}" for key in IPC_KEYS if libc.shmget(key, 0, 0) >= 0]
    return sorted(found)


def clean_leftovers() -> None:
    """Remove what the attacks left behind (their own names only)."""
    for pattern in LEFTOVERS:
        for p in glob.glob(pattern):
            if p != str(MARKERS):
                shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else Path(p).unlink(missing_ok=True)
    libc = ctypes.CDLL(None, use_errno=True)
    for key in IPC_KEYS:
        shmid = libc.shmget(key, 0, 0)
        if shmid >= 0:
            libc.shmctl(shmid, 0, None)  # IPC_RMID


def fresh_markers() -> None:
    shutil.rmtree(MARKERS, ignore_errors=True)
    MARKERS.mkdir()
    MARKERS.chmod(0o1777)


def read_grade(folder: Path) -> dict[str, Any] | None:
    try:
        g = json.loads((folder / "grade.json").read_text())
    except (OSError, ValueError):
        return None
    return g if isinstance(g, dict) else None


def result_folder(out: Path, attack: str, entry: str) -> Path | None:
    """The folder of OUT holding the entry's results: by the grade's `submission`, else by folder name.

    `entry` is the entry's name in the class folder (file or folder); the grader may name the
    result folder by it, by it without .py/.zip, or by a sanitised form starting with the attack id.
    """
    stem = entry.removesuffix(".py").removesuffix(".zip")
    try:
        folders = sorted(p for p in out.iterdir() if p.is_dir())
    except OSError:
        return None
    grades = {p: g for p in folders if (g := read_grade(p)) is not None}
    named = slug(stem)  # the grader's own name for it (conformance/grading/collect.py)
    for test in (lambda p, g: g.get("submission") in (entry, stem), lambda p, g: p.name in (entry, stem, named),
                 lambda p, g: p.name.startswith(attack), lambda p, g: str(g.get("submission")).startswith(attack),
                 lambda p, g: p.name.startswith(stem), lambda p, g: str(g.get("submission")).startswith(stem)):
        found = [p for p, g in grades.items() if test(p, g)]
        if found:
            return found[0]
    return None


def grade_json(out: Path, attack: str, entry: str) -> dict[str, Any] | None:
    folder = result_folder(out, attack, entry)
    return None if folder is None else read_grade(folder)


def strings(value: object) -> list[str]:
    """Every string inside a JSON value (what a renderer of results.json shows)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def shown(folder: Path, out: Path) -> list[tuple[str, str]]:
    """The text people and tools render: report.md, results.json's strings, junit.xml, the class summary.

    grade.json and counterexample.json are internal records (data, never rendered) and may keep raw text.
    """
    found = []
    for path in (folder / "report.md", folder / "junit.xml", out / "summary.csv", out / "overview.md"):
        with contextlib.suppress(OSError):
            found.append((path.name, path.read_text(errors="surrogateescape")))
    with contextlib.suppress(OSError, ValueError):
        found.append(("results.json", "\n".join(strings(json.loads((folder / "results.json").read_text())))))
    return found


def problems(attack: str, entry: str, out: Path, regrade: Path | None = None) -> list[str]:
    """Everything about one entry's results that differs from its expectation."""
    exp = EXPECT[attack]
    folder = result_folder(out, attack, entry)
    g = None if folder is None else read_grade(folder)
    if folder is None or g is None:
        return [f"no grade.json for entry {entry!r}"]
    found = []
    score = g["score"]
    if "score" in exp and score != exp["score"]:
        found.append(f"score {score}, expected {exp['score']}")
    if "max_score" in exp and score > exp["max_score"]:
        found.append(f"score {score}, expected at most {exp['max_score']}")
    if "min_score" in exp and score < exp["min_score"]:
        found.append(f"score {score}, expected at least {exp['min_score']}")
    statuses = [i["status"] for i in g["items"]]
    want = exp.get("status")
    wanted = want if type(want) is list else [want] if want else []
    if wanted == ["passed"] and set(statuses) != {"passed"}:
        found.append(f"item statuses {sorted(set(statuses))}, expected all passed")
    elif wanted and wanted != ["passed"] and not set(wanted) & set(statuses):
        found.append(f"item statuses {sorted(set(statuses))}, expected some item {' or '.join(wanted)}")
    text = "\n".join([*g.get("notes", []), *(i["output"] for i in g["items"])]).lower()
    if exp.get("reason") and not any(r.lower() in text for r in exp["reason"]):
        found.append(f"no reason naming any of {exp['reason']} in the notes or item outputs")
    for name, body in shown(folder, out):
        for bad in exp.get("must_not", []):
            if bad in body:
                found.append(f"{name} contains {bad!r}")
    junit = folder / "junit.xml"
    try:
        cases = ET.parse(junit).getroot().findall(".//testcase")
        if len(cases) != len(g["items"]):
            found.append(f"junit.xml has {len(cases)} testcases for {len(g['items'])} items")
    except (OSError, ET.ParseError) as e:
        found.append(f"junit.xml is not well-formed XML: {e}")
    if marks := markers_of(attack):
        found.append(f"escaped: markers {marks}")
    if regrade is not None and exp.get("regrade_same", True):
        again = grade_json(regrade, attack, entry)
        if again is None or again["score"] != score:
            found.append(f"regrade gave {None if again is None else again['score']}, the first grade {score}")
    return found


# --- the slow checks ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def main_class(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The main class graded twice (the second grading is the regrade); leftovers collected once."""
    root = tmp_path_factory.mktemp("attacks")
    fresh_markers()
    clean_leftovers()
    entries = build_class(root / "class", "main")
    started = time.monotonic()
    first = run_grade(root / "class", root / "out", CLASS_SECONDS)
    left = leftovers()
    clean_leftovers()
    second = run_grade(root / "class", root / "regrade", CLASS_SECONDS)
    clean_leftovers()
    return {"entries": entries, "out": root / "out", "regrade": root / "regrade", "first": first, "second": second,
            "leftovers": left, "seconds": time.monotonic() - started}


@pytest.mark.slow
def test_main_class_run_finishes(main_class: dict[str, Any]) -> None:
    for run in ("first", "second"):
        code, err = main_class[run]
        assert code in (0, 3), f"the {run} class run did not finish cleanly (exit {code}): {err[-2000:]}"  # 3: some
        # entries could not be used (refused up front), none lost, no grader error
    summary = main_class["out"] / "summary.csv"
    assert summary.is_file(), "no summary.csv"
    assert len(summary.read_text(errors="surrogateescape").splitlines()) >= len(main_class["entries"]) + 1


@pytest.mark.slow
def test_main_class_leaves_nothing_behind(main_class: dict[str, Any]) -> None:
    assert main_class["leftovers"] == [], "files or IPC objects of the attacks outlived their sandboxes"


@pytest.mark.slow
@pytest.mark.parametrize("attack", MAIN)
def test_main_class_entry(main_class: dict[str, Any], attack: str) -> None:
    entry = main_class["entries"][attack]
    assert problems(attack, entry, main_class["out"], main_class["regrade"]) == []


@pytest.mark.slow
@pytest.mark.parametrize("attack", SOLO)
def test_solo_attack(tmp_path: Path, attack: str) -> None:
    """An attack that may break a class run, in a class of its own with the honest classmates."""
    fresh_markers()
    clean_leftovers()
    entries = build_class(tmp_path / "class", only=attack)
    code, err = run_grade(tmp_path / "class", tmp_path / "out", SOLO_SECONDS)
    left = leftovers()
    clean_leftovers()
    found = [] if code in (0, 3) else [f"the class run did not finish cleanly (exit {code}): {err[-1500:]}"]
    if not (tmp_path / "out" / "summary.csv").is_file():
        found.append("no summary.csv file")
    for honest in HONEST:
        found += [f"{honest}: {p}" for p in problems(honest, entries[honest], tmp_path / "out")]
    found += problems(attack, entries[attack], tmp_path / "out")
    found += [f"left behind: {p}" for p in left]
    assert found == []
