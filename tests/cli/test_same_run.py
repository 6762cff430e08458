"""`schedcheck` starts itself again with string hashing fixed and address randomization off, so a submission
that iterates a set of its seq_id strings gets the same report whatever PYTHONHASHSEED the shell had."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STRING_SET = ("\n\nclass Scheduler(Scheduler):  # finished ids deduplicated through a set of strings\n"
              "    def update(self):\n        done = super().update()\n        by_id = {q.seq_id: q for q in done}\n"
              "        return [by_id[i] for i in set(by_id)]\n")


def report(tmp_path: Path, hash_seed: str, again: bool) -> bytes:
    sub = tmp_path / "string_set.py"
    if not sub.exists():
        sub.write_text((ROOT / "impl" / "scheduler.py").read_text() + STRING_SET)
    out = tmp_path / f"{hash_seed}-{again}.json"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    env.pop("SCHEDCHECK_SAME_RUN", None)
    if not again:
        env["SCHEDCHECK_SAME_RUN"] = "1"  # as if already started again: the shell's seed stays
    subprocess.run([sys.executable, "-m", "conformance", "check", str(sub), "--json", str(out)], cwd=ROOT, env=env,
                   capture_output=True, timeout=600, check=False)
    return out.read_bytes()


@pytest.mark.long
def test_the_report_is_the_same_whatever_the_shells_hash_seed(tmp_path):
    assert report(tmp_path, "1", again=True) == report(tmp_path, "2", again=True)


@pytest.mark.slow
def test_without_starting_again_the_hash_seed_changes_the_report(tmp_path):
    """The control: the same two seeds, kept, give two different counterexamples."""
    assert report(tmp_path, "1", again=False) != report(tmp_path, "2", again=False)
