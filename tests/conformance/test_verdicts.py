"""Verdicts: a fault in the suite itself is ERROR (exit 3, traceback printed), never PASS; a check that
could not run to a verdict is UNKNOWN (exit 4); the submission's own exceptions stay findings."""

import pytest

from conformance import suite
from conformance.checks import machine, probes
from conformance.cli import main
from conformance.profiles import Profile
from conformance.reports.report import EXIT_ERROR, EXIT_UNKNOWN
from spec.model import Config
from spec.trace import Request, make_workload

TINY = Profile("tiny", None, 3, 2, 5)
CORPUS = ("counterexamples",)


def boom(*args, **kwargs):
    raise RuntimeError("planted fault in the suite")


def test_a_checker_that_raises_gives_error_and_exit_3_not_pass(monkeypatch, capsys):
    monkeypatch.setattr(probes, "golden", boom)
    report = suite.run("impl", TINY, families=CORPUS)
    assert (report.verdict, report.exit_code) == ("ERROR", EXIT_ERROR)
    assert "RuntimeError: planted fault in the suite" in report.error
    assert report.checks["golden"].status == "unknown"
    assert '"verdict": "ERROR"' in report.dumps()
    monkeypatch.setattr(suite, "PROFILES", {"quick": TINY})
    assert main(["check", "impl", "--quiet"]) == 3
    captured = capsys.readouterr()
    assert "Traceback" in captured.err and "planted fault" in captured.err
    assert "ERROR: the suite failed" in captured.out and "PASS" not in captured.out


def test_a_fault_inside_the_state_machine_is_not_swallowed(monkeypatch):
    monkeypatch.setattr(machine, "state_violations", boom)
    report = suite.run("impl", TINY, families=CORPUS)
    assert report.verdict == "ERROR" and "planted fault" in report.error


def test_a_fault_while_shrinking_a_real_finding_is_error_not_fail(monkeypatch):
    monkeypatch.setattr(suite, "shrink", boom)
    report = suite.run("conformance/mutants/preempt_to_tail.py", TINY, families=CORPUS)
    assert report.verdict == "ERROR" and report.exit_code == EXIT_ERROR


def test_a_stateful_failure_the_driver_cannot_reproduce_is_unknown(monkeypatch):
    passing = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 1)])
    monkeypatch.setattr(suite, "run_machine", lambda *a, **k: passing)
    report = suite.run("impl", TINY, families=CORPUS)
    assert (report.checks["stateful"].status, report.verdict, report.exit_code) == ("unknown", "UNKNOWN",
                                                                                   EXIT_UNKNOWN)
    assert any(n.startswith("stateful:") for n in report.notes)


def test_a_submission_that_raises_is_a_finding_not_an_error(tmp_path):
    p = tmp_path / "raises.py"
    p.write_text("from impl.scheduler import Scheduler as Base, Sequence, SequenceStatus\n\n"
                 "class Scheduler(Base):\n"
                 "    def update(self):\n"
                 "        raise RuntimeError('boom from the submission')\n")
    report = suite.run(str(p), TINY, families=CORPUS)
    assert report.verdict == "FAIL" and report.error is None
    assert report.checks["hygiene"].counterexample.finding.rule == "H.raised"


@pytest.mark.parametrize("status, verdict", [("pass", "PASS"), ("skipped", "PASS"), ("unknown", "UNKNOWN"),
                                             ("fail", "FAIL")])
def test_verdict_precedence(status, verdict):
    from conformance.reports.report import CheckResult, Report

    checks = {"golden": CheckResult("pass"), "invariants": CheckResult(status)}
    report = Report("x", None, TINY, True, checks, {}, [], 0)
    assert report.verdict == verdict
    report.error = "Traceback ..."
    assert report.verdict == "ERROR"


RAISES = {
    "SystemExit": "        raise SystemExit(3)\n",  # sys.exit() in a call: it ended check itself
    "GeneratorExit": "        raise GeneratorExit('closed')\n",
    "a message whose length is negative": (  # printing it raised inside the report: check crashed with a traceback
        "        class Odd(str):\n            def __len__(self):\n                return -1\n"
        "        class Arg:\n            def __str__(self):\n                return Odd('odd')\n"
        "        raise RuntimeError(Arg())\n"),
}


@pytest.mark.parametrize("how", sorted(RAISES))
def test_whatever_a_submission_raises_in_process_is_a_finding(tmp_path, how):
    p = tmp_path / "raises.py"
    p.write_text("from impl.scheduler import Scheduler as Base, Sequence, SequenceStatus\n\n"
                 "class Scheduler(Base):\n"
                 "    def schedule(self):\n" + RAISES[how])
    report = suite.run(str(p), TINY, families=CORPUS)
    assert report.verdict == "FAIL" and report.error is None, report.error
    assert report.checks["hygiene"].counterexample.finding.rule == "H.raised"
