"""The layout's rules, checked on the code: spec/ imports nothing above it, and no module grows past 300 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ABOVE_SPEC = ("conformance", "impl", "bench", "tests")
MAX_LINES = 300
LONG_BY_DESIGN = ("conformance/selfcheck/styles/",)  # independent submissions, kept as their authors wrote them


def imported(path: Path) -> set[str]:
    """Top-level package names a module imports, anywhere in it (lazy imports in functions included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.partition(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.partition(".")[0])
    return names


def sources(*packages: str) -> list[Path]:
    return sorted(p for pkg in packages for p in (ROOT / pkg).rglob("*.py"))


@pytest.mark.parametrize("path", sources("spec"), ids=lambda p: str(p.relative_to(ROOT)))
def test_spec_imports_nothing_above_it(path):
    assert not imported(path) & set(ABOVE_SPEC), f"{path.relative_to(ROOT)} imports {imported(path) & set(ABOVE_SPEC)}"


def test_no_module_is_over_300_lines():
    long = [f"{p.relative_to(ROOT)}: {n}" for p in sources("spec", "impl", "conformance", "bench")
            if not str(p.relative_to(ROOT)).startswith(LONG_BY_DESIGN)
            and (n := len(p.read_text().splitlines())) > MAX_LINES]
    assert not long, long


def test_the_layer_check_sees_an_upward_import(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("def f():\n    from conformance.adapters import load_target\n")
    assert "conformance" in imported(bad)
