"""Bugs written from outside the project (tests/conformance/unseen/README.md): quick must fail every one.

Each bug is stored as edits of the correct file it was derived from (unseen/planted.py) and
planted into a file at test time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.suite import run
from tests.conformance.unseen.planted import ROOT, STILL_MISSED, UNSEEN, load_planted, source

ONCE_MISSED = ("dod_eos_sentinel", "ev_finished_trim")  # no verdict, or a PASS, before the fixes named in the README
EQUIVALENT = ("st_resort_128",)  # behaves exactly as the spec (README): a PASS is right


def verdict(name: str, tmp_path: Path) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(source(name))
    return run(str(path), "quick", diagnose=False).verdict


def test_every_unseen_bug_changes_its_base_file():
    for name, planted in UNSEEN.items():
        assert source(name) != (ROOT / planted.base).read_text(), name


def test_the_readme_names_every_unseen_bug():
    readme = (Path(__file__).parent / "unseen" / "README.md").read_text()
    assert sorted(UNSEEN) == sorted(name for name in UNSEEN if f"| {name}.py |" in readme)
    assert readme.count(".py |") == len(UNSEEN)
    assert all(f"| `{name}` |" in readme.split("## Still missed")[1] for name in STILL_MISSED)


def test_a_clock_reset_by_each_new_scheduler_reorders_the_queue_of_one_already_running(tmp_path):
    """hq_global_clock is a real bug (README; once missed by every profile): a scheduler made mid-run lets a3 pass
    a2."""
    module = load_planted("hq_global_clock", tmp_path)
    first = module.Scheduler(1, 1, 1, 1, lambda q: 7)
    for seq_id in ("a1", "a2"):
        first.add(module.Sequence(seq_id, 1, 1))
    assert first.schedule() == {"a1": 1}
    first.update()
    module.Scheduler(1, 1, 1, 1, lambda q: 7)  # made, never called
    first.add(module.Sequence("a3", 1, 1))
    assert first.schedule() == {"a3": 1}  # the rules give {"a2": 1}: a2 arrived first


@pytest.mark.long
@pytest.mark.parametrize("name", ONCE_MISSED)
def test_the_bugs_the_suite_once_missed_fail_quick(name, tmp_path):
    assert verdict(name, tmp_path) == "FAIL"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n in UNSEEN if n not in ONCE_MISSED + EQUIVALENT))
def test_every_unseen_bug_fails_quick(name, tmp_path):
    assert verdict(name, tmp_path) == "FAIL"


@pytest.mark.slow
@pytest.mark.parametrize("name", EQUIVALENT)
def test_an_equivalent_change_passes(name, tmp_path):
    assert verdict(name, tmp_path) == "PASS"
