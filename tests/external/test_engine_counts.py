"""docs/engines.md's count of each engine's external tests is the number pytest collects under ``-m external``
(the docs quote bench/measured/records through bench/figures.py, whose lint checks the quote is the record's)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "bench" / "measured" / "records"


@pytest.mark.long
@pytest.mark.parametrize("tests, record, key", [
    ("test_vllm.py", "vllm-2026-12-05.json", ("run_sh", "tests")),
    ("test_nanovllm.py", "nanovllm-causes-2026-12-05.json", ("external_tests", "count")),
    ("test_sglang.py", "sglang-2026-12-05.json", ("external_tests", "count"))])
def test_the_docs_count_of_an_engines_tests_is_the_number_collected(tests, record, key):
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "external", "-p",
                           "no:randomly", f"tests/external/{tests}"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    found = re.search(r"^(\d+) tests? collected", done.stdout, re.MULTILINE)
    assert found, done.stdout[-500:] + done.stderr[-500:]
    stored = json.loads((RECORDS / record).read_text())
    assert int(found.group(1)) == stored[key[0]][key[1]], f"measure {tests} again: bash tests/external/run.sh"
