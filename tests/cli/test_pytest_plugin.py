"""`pytest --schedcheck PATH`: one item per check, failures carry the counterexample, JUnit XML for free."""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKS = ["golden", "differential", "invariants", "equivalence", "liveness", "hygiene", "stateful"]


@pytest.mark.long
def test_each_check_is_an_item_and_a_failing_one_shows_its_counterexample(tmp_path):
    mutant = ROOT / "conformance" / "mutants" / "phase2_continue.py"
    junit = tmp_path / "junit.xml"
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # and no addopts: the plugin alone
    done = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "conformance.pytest_plugin",
                           "-p", "no:cacheprovider",
                           "--schedcheck", "impl", "--schedcheck", str(mutant), f"--junitxml={junit}", "-q"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    cases = {(c.get("classname"), c.get("name")): c for c in ET.parse(junit).getroot().iter("testcase")}
    impl = [c for (cls, _), c in cases.items() if "impl" in cls]
    assert sorted(c.get("name") for c in impl) == sorted(CHECKS)
    assert all(c.find("failure") is None and c.find("error") is None for c in impl)
    failed = {name for (cls, name), c in cases.items() if "phase2_continue" in cls and c.find("failure") is not None}
    assert "golden" in failed and "differential" in failed
    assert "[P2.stop]" in done.stdout and "rerun: schedcheck check" in done.stdout


def test_without_the_option_the_plugin_adds_nothing(tmp_path):
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # and no addopts: the plugin alone
    done = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "conformance.pytest_plugin",
                           "-p", "no:cacheprovider",
                           "-q", "--collect-only"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "1 test collected" in done.stdout and "schedcheck" not in done.stdout
