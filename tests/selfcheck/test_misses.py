"""The stored missed cases (conformance/selfcheck/missed/) are made again from their style file and mutation id."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.selfcheck.misses import MISSED_DIR, MISSES, file_name, mutant, regenerate
from conformance.selfcheck.triage import TRIAGE


@pytest.mark.parametrize("miss", MISSES, ids=lambda m: m.mutant_id)
def test_a_stored_miss_is_its_mutation_id_made_again(miss) -> None:
    assert TRIAGE[miss.mutant_id][0] == "missed"
    assert (MISSED_DIR / file_name(miss.mutant_id)).read_text() == regenerate(miss)


def test_every_stored_file_is_a_listed_miss() -> None:
    assert sorted(p.name for p in MISSED_DIR.glob("*.py")) == sorted(file_name(m.mutant_id) for m in MISSES)


def test_an_id_the_style_file_no_longer_has_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "tiny.py").write_text("x = 1\n")
    with pytest.raises(KeyError, match="rerun the campaign"):
        mutant("tiny.py:9:0:cmp", tmp_path)
