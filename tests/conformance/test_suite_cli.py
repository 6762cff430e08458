"""The whole run: spec and impl pass, the bundled buggy example fails with a replayable counterexample,
exit codes follow the contract, and two runs give byte-identical JSON reports."""

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.suite import run

BUGGY = "examples/p07_buggy/p07_scheduler.py"


@pytest.mark.parametrize("target", ["spec", "impl"])
def test_spec_and_impl_pass_the_quick_profile_with_zero_findings(target):
    report = run(target, "quick")
    assert report.verdict == "PASS", report.summary()
    assert all(c.failed == 0 for c in report.checks.values())


@pytest.fixture(scope="module")
def checked_buggy(tmp_path_factory):
    """One `check BUGGY --quiet --json a.json --trace-dir t --html p.html` (seconds), for the tests that read what it
    printed, its JSON, its traces and its page: (exit code, what it printed, the folder of a.json, t/ and p.html,
    and what it loaded and showed: watched())."""
    folder = tmp_path_factory.mktemp("buggy")
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        seen = watched(patch)
        code = main(["check", BUGGY, "--quiet", "--json", str(folder / "a.json"), "--trace-dir", str(folder / "t"),
                     "--html", str(folder / "p.html")])
    return code, printed.getvalue(), folder, seen


def watched(patch: pytest.MonkeyPatch) -> dict[str, list[object]]:
    """Record, while `patch` holds, which module loads the submission, and the run the step table and the page
    each show."""
    import conformance.adapters as adapters
    import conformance.cli.check as check_cli
    import conformance.reports.traces as traces
    import conformance.suite as suite
    import conformance.viewer.page as page

    seen: dict[str, list[object]] = {"loads": [], "table": [], "page": []}
    real, real_table, real_page = adapters.load_target, traces.render, page.render_page

    def counting(where: str):  # type: ignore[no-untyped-def]
        def load(target: str, adapter: str | None = None):  # type: ignore[no-untyped-def]
            seen["loads"].append(where)
            return real(target, adapter)
        return load

    def table(cx, observed):  # type: ignore[no-untyped-def]
        seen["table"].append(observed)
        return real_table(cx, observed)

    def html(workload, observed, **kw):  # type: ignore[no-untyped-def]
        seen["page"].append(observed)
        return real_page(workload, observed, **kw)

    patch.setattr(adapters, "load_target", counting("elsewhere"))
    for module in (suite, traces, check_cli):
        patch.setattr(module, "load_target", counting(module.__name__), raising=False)
    patch.setattr(check_cli, "render", table)
    patch.setattr(page, "render_page", html)
    return seen


@pytest.mark.long
def test_check_exit_codes_and_byte_identical_json(tmp_path, checked_buggy):
    code, out, folder, _ = checked_buggy
    a, b = folder / "a.json", tmp_path / "b.json"
    assert code == 1
    assert "FAIL  differential: step 2" in out and "[P2.stop]" in out and ">>" in out
    assert "diagnosis: behaves like preempt_clears_output" in out and "causes: 1" in out
    assert main(["check", BUGGY, "--quiet", "--json", str(b)]) == 1
    assert a.read_bytes() == b.read_bytes()
    text = a.read_text()
    assert str(Path.cwd()) not in text and "seconds" not in text
    report = json.loads(text)
    assert report["verdict"] == "FAIL" and report["checks"]["differential"]["counterexample"]["rule"] == "P2.stop"
    assert report["diagnosis"]["matches"] == ["preempt_clears_output"]
    assert report["checks"]["equivalence"]["counterexample"]["rule"] == "OUT"


def test_unloadable_submission_exits_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "missing.py"), "--quiet"]) == 2
    assert "cannot load" in capsys.readouterr().err


def test_counterexample_replays_and_its_pytest_file_reproduces_the_failure(tmp_path, capsys, checked_buggy):
    trace_dir = checked_buggy[2] / "t"  # check BUGGY --quiet --trace-dir, run once for this module
    trace = next(trace_dir.glob("*_differential.json"))
    assert main(["replay", str(trace), BUGGY]) == 1
    assert main(["replay", str(trace), "conformance/mutants/reference_scheduler.py"]) == 0
    assert main(["replay", str(tmp_path / "none.json"), BUGGY]) == 2
    source = next(trace_dir.glob("*_differential_test.py")).read_text()
    for submission, fails in ((BUGGY, True), ("conformance/mutants/reference_scheduler.py", False)):
        os.environ["SCHEDCHECK_SUBMISSION"] = submission
        try:
            namespace = {"__file__": str(trace_dir / "x.py")}
            exec(compile(source, "repro", "exec"), namespace)
            test = next(v for k, v in namespace.items() if k.startswith("test_"))
            if fails:
                with pytest.raises(AssertionError):
                    test()
            else:
                test()
        finally:
            del os.environ["SCHEDCHECK_SUBMISSION"]


def test_check_loads_the_submission_once_beside_the_suite_and_shows_the_run_replay_shows(checked_buggy):
    """The CLI adds one load to the suite's: the fresh copy the counterexample is replayed on, whose run the step
    table and the page both show (they ran the submission again, each on copies of their own, and the page after
    the table's run); whether methods are still to write is read from the suite's copy."""
    code, _, _, seen = checked_buggy
    assert code == 1
    assert sorted(seen["loads"]) == ["conformance.reports.traces", "conformance.suite"], seen["loads"]
    [table], [shown] = seen["table"], seen["page"]
    assert table is not None and table["steps"], "the table shows no run of the submission"
    assert shown.to_json() == table, "the page shows another run than the table"
