"""Bugs planted in spec/rules.py from outside (tests/proofs/outside/): the proofs' own checks must catch each.

`prove --quick` compares the z3 encoding with spec.rules on a stream of workloads before it proves anything
(a planted bug makes the two disagree), then model-checks spec.rules itself. The default tests run the
comparison on each bug; the slow one runs the whole command on a copy of spec/ with the bug planted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import spec.rules
from spec import faults
from spec.bounded import validate
from tests.proofs.encodings import encoding
from tests.proofs.outside import OUTSIDE, SAME

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def validator() -> validate.Validator:
    return encoding()  # validate.Validator(), built once per process (tests/proofs/encodings.py)


def test_each_outside_bug_is_one_edit_that_changes_the_spec():
    clean = faults.RULES_PATH.read_text()
    for name, (_, edits) in OUTSIDE.items():
        assert faults.apply_edits(clean, edits, name) != clean, name
    assert set(SAME.values()) <= set(faults.BY_NAME) | set(faults.GUARDS)


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_the_encoding_disagrees_with_the_spec_carrying_the_bug(name, validator):
    validator.rules = faults.module_with(OUTSIDE[name][1], name)
    try:
        found = next((m for w in validate.workloads(validate.SEED, validate.QUICK_COUNT)
                      if (m := validator.compare(w)) is not None), None)
    finally:
        validator.rules = spec.rules
    assert found is not None, f"{name}: prove --quick's validation agrees with the spec carrying it"


def prove_quick_with(tmp_path: Path, edits: tuple[faults.Edit, ...], name: str) -> subprocess.CompletedProcess[str]:
    """`schedcheck prove --quick` on a copy of spec/ whose rules.py carries the edits."""
    shutil.copytree(ROOT / "spec", tmp_path / "spec", ignore=shutil.ignore_patterns("__pycache__"))
    rules = tmp_path / "spec" / "rules.py"
    rules.write_text(faults.apply_edits(rules.read_text(), edits, name))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    code = ("import argparse, sys; from spec.bounded import cli; p = argparse.ArgumentParser(); "
            "cli.add_arguments(p); sys.exit(cli.main(p.parse_args(['--quick'])))")
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900, check=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["update_sorted_batch_order", "apply_one_eos_zero_falsy",
                                  "check_request_rejects_exact_fit"])
def test_prove_quick_exits_nonzero_with_the_bug_planted_in_spec_rules(name, tmp_path):
    done = prove_quick_with(tmp_path, OUTSIDE[name][1], name)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
