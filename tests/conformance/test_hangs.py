"""A submission that loops forever: `check` stops after a few hangs, deterministically, and says so.

Every run is limited to RUN_SECONDS of CPU time, but a profile holds about a thousand workloads:
without a stop, a hang in a common case costs hours. The limit is lowered here so each hang
costs half a second; the count of hangs, not the seconds, is what is asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import drivers, limits, suite
from conformance.checks import history, machine

IMPL = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"
SCHEDULE = '''    def schedule(self) -> dict[str, int]:
'''


def hanging(tmp_path: Path, condition: str) -> Path:
    """The correct scheduler, with schedule() spinning forever whenever `condition` holds."""
    text = IMPL.read_text()
    assert SCHEDULE in text
    path = tmp_path / "p07_scheduler.py"
    path.write_text(text.replace(SCHEDULE, SCHEDULE + f"        while {condition}:\n            pass\n"))
    return path


def count_timeouts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every time limit that fires from now on, counted."""
    fired: list[int] = []
    raise_timeout = limits._raise_timeout

    def counting(signum, frame):
        fired.append(signum)
        raise_timeout(signum, frame)
    monkeypatch.setattr(limits, "_raise_timeout", counting)
    return fired


def lower_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run hangs for 0.5 s of CPU instead of 10 (too short for the long scale runs of a correct one)."""
    monkeypatch.setattr(drivers, "RUN_SECONDS", 0.5)
    monkeypatch.setattr(history, "RUN_SECONDS", 1.0)
    monkeypatch.setattr(machine, "RUN_SECONDS", 0.5)


@pytest.fixture
def fired(monkeypatch):
    """Every time limit that fires, counted."""
    return count_timeouts(monkeypatch)


@pytest.fixture
def fast_limits(monkeypatch, fired):
    """Each run hangs for 0.5 s of CPU (lower_limits); the limits that fire, counted."""
    lower_limits(monkeypatch)
    return fired


@pytest.fixture(scope="module")
def always_hanging(tmp_path_factory):
    """A quick run, under fast_limits, of a scheduler that hangs whenever more than two wait: (its path, the report,
    the time limits that fired in the run). Made once: two tests read it (a run costs seconds of hangs)."""
    path = str(hanging(tmp_path_factory.mktemp("always"), "len(self.waiting) > 2"))
    with pytest.MonkeyPatch.context() as mp:
        fired = count_timeouts(mp)
        lower_limits(mp)
        report = suite.run(path, "quick")
    return path, report, fired


@pytest.mark.long
def test_a_submission_that_always_hangs_stops_after_a_few_hangs(always_hanging):
    _, report, fired = always_hanging
    assert report.verdict == "FAIL"
    assert len(fired) <= suite.HANGS_EXPLORING + suite.HANGS_SHRINKING
    assert any(n.startswith("stopped early: 3 runs did not end") for n in report.notes)
    statuses = {c: r.status for c, r in report.checks.items()}
    assert "fail" in statuses.values() and set(statuses.values()) <= {"fail", "unknown"}
    failed = [cx.finding for cx in report.counterexamples]
    assert all(f.rule == "H.timeout" and "did not return" in f.message for f in failed if f.check == "golden")


@pytest.mark.long
def test_a_hang_found_after_other_findings_keeps_them_and_stops(tmp_path, fast_limits):
    """A hang only with long waiting queues: the golden cases pass, the corpus finds it, shrinking is bounded."""
    report = suite.run(str(hanging(tmp_path, "len(self.waiting) > 4")), "quick")
    assert report.verdict == "FAIL"
    assert len(fast_limits) <= suite.HANGS_EXPLORING + suite.HANGS_SHRINKING
    assert report.checks["golden"].status == "pass"
    assert any(cx.finding.rule == "H.timeout" for cx in report.counterexamples)
    timed_out = next(cx for cx in report.counterexamples if cx.finding.rule == "H.timeout")
    assert len(timed_out.workload.requests) >= 5  # the hang needs five waiting


@pytest.mark.long
def test_the_stop_is_deterministic(always_hanging, fast_limits):
    path, report, _ = always_hanging  # the first run; the second, on the same file, here
    first, second = (json.dumps(r.to_json(), sort_keys=True) for r in (report, suite.run(path, "quick")))
    assert first == second


@pytest.mark.long
def test_without_a_hang_nothing_stops(fired):
    report = suite.run("impl", "quick")
    assert report.verdict == "PASS" and fired == []
    assert not any("stopped early" in n for n in report.notes)
