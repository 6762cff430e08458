"""--html on check and replay writes the counterexample as a viewer page, opened at its first divergence."""

from pathlib import Path

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[2]
VECTOR = ROOT / "conformance/workloads/data/counterexamples/victim_first.golden.json"


def divergent_steps(page: str) -> list[str]:
    return [part.split('"')[0] for part in page.split('class="step diverges" id="step-')[1:]]


def test_replay_writes_the_page_of_the_failing_run(tmp_path):
    out = tmp_path / "r.html"
    assert main(["replay", str(VECTOR), str(ROOT / "conformance/mutants/victim_first.py"), "--html", str(out)]) == 1
    page = out.read_text()
    assert divergent_steps(page) and 'class="badge">first divergence' in page and "FAIL" in page
    assert main(["replay", str(VECTOR), "impl", "--html", str(out)]) == 0
    assert divergent_steps(out.read_text()) == []


def test_check_writes_the_page_of_the_shown_counterexample(tmp_path, capsys):
    out = tmp_path / "c.html"
    assert main(["check", str(ROOT / "examples/p07_buggy/p07_scheduler.py"), "--quiet", "--html", str(out)]) == 1
    assert f"wrote {out}" in capsys.readouterr().out
    assert divergent_steps(out.read_text())[0] == "2"
