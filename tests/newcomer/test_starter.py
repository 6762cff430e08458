"""A student's first hour: course-init's starter, what check says about it, the pages at hand, grading messages."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import course
from conformance.adapters import load_target
from conformance.cli import docs
from conformance.starter import starter_text, unimplemented

REPO = Path(__file__).resolve().parents[2]
RULE_ID = re.compile(r"\b(?:P1|P2|U)(?:\.[a-z_]+)?\b|\bI[1-6]\b")


def schedcheck(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.long
def test_course_init_writes_a_starter_and_check_names_each_method_still_to_write(tmp_path):
    made = schedcheck("course-init", "course", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    mine = tmp_path / "course" / "mine" / "p07_scheduler.py"
    assert mine.read_text() == starter_text()
    done = subprocess.run(["./check.sh", "p07"], cwd=tmp_path / "course", capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = [line.strip() for line in done.stdout.splitlines() if "not implemented yet" in line]
    assert lines == [f"Scheduler.{m}: not implemented yet (it raises NotImplementedError)"
                     for m in ("add", "schedule", "update")]


def test_course_init_never_replaces_the_students_own_file(tmp_path):
    args = course.argparse.Namespace(dir=str(tmp_path), force=True)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "p07_scheduler.py").write_text("# my work\n")
    assert course.main(args) == 0
    assert (tmp_path / "mine" / "p07_scheduler.py").read_text() == "# my work\n"


def test_an_unwritten_helper_is_named_with_the_call_that_reached_it(tmp_path):
    """schedule() written, _try_grow not: the line names the helper, not schedule()."""
    text = starter_text()
    body = ('        raise NotImplementedError("Scheduler.add")', "        self.waiting.append(seq)")
    sched = ('        raise NotImplementedError("Scheduler.schedule")',
             "        head = self.waiting[0]\n        self._try_grow(head, 1)\n        return {}")
    for old, new in (body, sched):
        assert text.count(old) == 1
        text = text.replace(old, new)
    path = tmp_path / "p07_scheduler.py"
    path.write_text(text)
    assert unimplemented(load_target(str(path))) == ["Scheduler._try_grow (called by Scheduler.schedule)",
                                                     "Scheduler.update"]


@pytest.mark.parametrize("target", ["impl", "spec"])
def test_a_written_scheduler_has_nothing_unimplemented(target):
    assert unimplemented(load_target(target)) == []


def test_the_starters_rule_ids_are_the_rules_pages():
    """Every rule id the starter's docstrings name is one that `schedcheck rules` defines."""
    rules = (REPO / "docs" / "rules.md").read_text()
    named = set(RULE_ID.findall(starter_text()))
    assert {"P1", "P1.preempt", "P1.skip_self", "P2", "P2.full", "P2.stop", "U.compute", "U.partial", "U.sample",
            "U.finish"} <= named
    assert [i for i in sorted(named) if f"`{i}`" not in rules and f"| {i} |" not in rules] == []


@pytest.mark.parametrize("command,page", [("api", "api"), ("rules", "rules"), ("docs", "grading")])
def test_the_pages_print_from_the_package(command, page, tmp_path):
    done = schedcheck(command, *([page] if command == "docs" else []), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (REPO / "docs" / f"{page}.md").read_text()


def test_every_page_of_docs_ships_in_the_package():
    assert sorted(docs.pages()) == sorted(p.stem for p in (REPO / "docs").glob("*.md"))
