"""Bugs written from outside the project (tests/conformance/unseen/README.md): quick must fail every one."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.suite import run

UNSEEN = Path(__file__).parent / "unseen"
ONCE_MISSED = ("dod_eos_sentinel", "ev_finished_trim")  # no verdict, or a PASS, before the fixes named in the README
EQUIVALENT = ("st_resort_128",)  # behaves exactly as the spec (README): a PASS is right


def verdict(name: str) -> str:
    return run(str(UNSEEN / f"{name}.py"), "quick", diagnose=False).verdict


@pytest.mark.parametrize("name", ONCE_MISSED)
def test_the_bugs_the_suite_once_missed_fail_quick(name):
    assert verdict(name) == "FAIL"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.stem for p in UNSEEN.glob("*.py") if p.stem not in ONCE_MISSED + EQUIVALENT))
def test_every_unseen_bug_fails_quick(name):
    assert verdict(name) == "FAIL"


@pytest.mark.slow
@pytest.mark.parametrize("name", EQUIVALENT)
def test_an_equivalent_change_passes(name):
    assert verdict(name) == "PASS"
