"""The campaign's real misses are made again from their style file and mutation id (nothing is stored twice)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conformance.selfcheck.misses import MISSES, file_name, mutant, regenerate, write
from conformance.selfcheck.triage import TRIAGE


@pytest.mark.parametrize("miss", MISSES, ids=lambda m: m.mutant_id)
def test_a_miss_is_its_style_file_with_one_change(miss) -> None:
    assert TRIAGE[miss.mutant_id][0] == "missed"
    text = regenerate(miss)
    ast.parse(text)
    assert text.startswith(f'"""Missed mutant {miss.mutant_id}:') and miss.workload in text
    style = (Path(mutant.__code__.co_filename).parent / "styles" / miss.mutant_id.split(":")[0]).read_text()
    assert ast.unparse(ast.parse(style)) != ast.unparse(ast.parse(text))


def test_write_makes_one_file_per_miss(tmp_path: Path) -> None:
    assert sorted(p.name for p in write(tmp_path)) == sorted(file_name(m.mutant_id) for m in MISSES)


def test_an_id_the_style_file_no_longer_has_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "tiny.py").write_text("x = 1\n")
    with pytest.raises(KeyError, match="rerun the campaign"):
        mutant("tiny.py:9:0:cmp", tmp_path)
