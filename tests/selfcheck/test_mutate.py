"""The mutator: deterministic, one change at a time, only compiling mutants, every operator reachable."""

import ast
from pathlib import Path

import pytest

from conformance.selfcheck.mutate import OPERATORS, mutants

STYLES = sorted((Path(__file__).resolve().parents[2] / "conformance" / "selfcheck" / "styles").glob("*.py"))

# One snippet in which every operator has somewhere to apply.
SNIPPET = '''
"""docstring stays"""
from collections import deque


def f(xs: list[int], q: deque[int], flag: bool = True) -> int:
    """and this one too"""
    total = 0
    for x in xs:
        if x < 3 and flag:
            continue
        if x >= 10 or x == 7:
            break
        total += x - 1
    q.append(total)
    q.popleft()
    xs.pop()
    xs.pop(0)
    ys = list(xs)
    zs = xs.copy()
    return min(total, -(-total // 2)) + max(ys[0], zs[-1], 1)
'''


def test_mutants_are_deterministic() -> None:
    first = [(m.mutant_id, m.source) for m in mutants(SNIPPET, "snippet.py")]
    second = [(m.mutant_id, m.source) for m in mutants(SNIPPET, "snippet.py")]
    assert first == second and len(first) > 30


def test_every_operator_fires_on_the_snippet() -> None:
    fired = {m.operator for m in mutants(SNIPPET, "snippet.py")}
    assert fired == set(OPERATORS), f"operators that never fired: {sorted(set(OPERATORS) - fired)}"


def test_mutants_compile_differ_and_have_unique_ids() -> None:
    baseline = ast.unparse(ast.parse(SNIPPET))
    found = list(mutants(SNIPPET, "snippet.py"))
    ids = [m.mutant_id for m in found]
    assert len(ids) == len(set(ids))
    for m in found:
        compile(m.source, m.mutant_id, "exec")
        assert m.source != baseline, m.mutant_id
        file, line, col, operator = m.mutant_id.split(":", 3)
        assert file == "snippet.py" and int(line) >= 1 and int(col) >= 0 and operator.startswith(m.operator)
        assert "\n" not in m.description and m.description


def test_each_mutant_changes_one_line_region() -> None:
    """A mutant differs from the unparsed original in one contiguous run of lines (deletions included)."""
    base = ast.unparse(ast.parse(SNIPPET)).splitlines()
    for m in mutants(SNIPPET, "snippet.py"):
        lines = m.source.splitlines()
        head = next(k for k in range(len(base)) if k >= len(lines) or base[k] != lines[k])
        tail = 0
        while tail < min(len(base), len(lines)) - head and base[-1 - tail] == lines[-1 - tail]:
            tail += 1
        removed, added = len(base) - head - tail, len(lines) - head - tail
        if m.operator == "del_stmt":   # a deleted compound statement takes its whole body with it
            assert added == 0 and removed >= 1, m.mutant_id
        else:
            assert removed == 1 and added == 1, m.mutant_id


def test_docstrings_and_sequence_fields_are_not_deleted() -> None:
    for m in mutants(SNIPPET, "snippet.py"):
        assert '"""docstring stays"""' in m.source or "docstring stays" in m.source
        assert "and this one too" in m.source
    style = STYLES[0]
    deleted = [m.description for m in mutants(style.read_text(), style.name) if m.operator == "del_stmt"]
    assert not any(d.startswith("delete `self.output") for d in deleted)


@pytest.mark.parametrize("style", [
    pytest.param(p, marks=() if k == 0 else pytest.mark.slow, id=p.stem) for k, p in enumerate(STYLES)
])
def test_styles_have_many_mutants_of_many_kinds(style: Path) -> None:
    found = list(mutants(style.read_text(), style.name))
    assert len(found) >= 100
    assert len({m.operator for m in found}) >= 10
