"""The layout's contract, checked on the code: each package imports only what its ``MAY_IMPORT`` names, no
modules import each other in a cycle (imports inside functions count), and no module re-exports what another
owns. A module may be as long as the one thing it owns needs."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("spec", "impl", "conformance", "bench")
FACADES = ("spec", "impl")  # a package whose __init__ is its public interface: `from spec import schedule`
ASSEMBLED = ("conformance.sandbox.child",)  # the child's driver: readers.py, wireshim.py and child.py sent as one
# module's text (conformance/sandbox/spawn.py); its __all__ is what boot.py calls on that one module


def modules() -> dict[str, Path]:
    """Every module of the project by dotted name (a package by its own name)."""
    found = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = modules()
PACKAGE_NAMES = sorted((m for m, p in MODULES.items() if p.name == "__init__.py"), key=len, reverse=True)


def owner(module: str) -> str:
    """The module itself if it is a package, else the innermost package holding it."""
    if MODULES[module].name == "__init__.py":
        return module
    return next(p for p in PACKAGE_NAMES if module.startswith(p + "."))


def resolve(name: str) -> str | None:
    """The project module an import of `name` loads (`from a.b import c`: a.b.c if it is a module, else a.b)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(path: Path) -> set[str]:
    """The project modules a module imports anywhere in it, late imports in functions included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names]
        found.update(r for n in names if (r := resolve(n)) is not None)
    return found


GRAPH = {m: imports(p) - {m} for m, p in MODULES.items()}


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of `graph`, as the modules around it (empty: there is none)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        path.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                return path[path.index(t):] + [t]
            if t not in state and (found := visit(t)):
                return found
        state[m] = 2
        path.pop()
        return []

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return []


def test_no_modules_import_each_other_in_a_cycle():
    assert cycle(GRAPH) == []


def test_the_cycle_check_sees_a_late_import_closing_a_cycle(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from conformance.checks.whitebox import invariants\n")
    b.write_text("def f():\n    from conformance.checks import checkers  # late: still an edge\n")
    graph = {**GRAPH, "conformance.checks.checkers": GRAPH["conformance.checks.checkers"] | imports(a)}
    assert "conformance.checks.whitebox" in imports(a) and "conformance.checks.checkers" in imports(b)
    assert cycle(graph)[0] in ("conformance.checks.checkers", "conformance.checks.whitebox")


@pytest.mark.parametrize("module", sorted(MODULES), ids=str)
def test_each_module_imports_only_what_its_package_may(module):
    package = owner(module)
    allowed = importlib.import_module(package).MAY_IMPORT
    outside = sorted(t for t in GRAPH[module] if owner(t) != package and not owner(t).startswith(package + ".")
                     and owner(t) not in allowed)
    assert outside == [], f"{module} imports {outside}; {package}.MAY_IMPORT allows {allowed}"


def test_every_package_says_what_it_owns_and_may_import():
    for package in PACKAGE_NAMES:
        assert (importlib.import_module(package).__doc__ or "").strip(), f"{package} has no docstring"
        allowed = importlib.import_module(package).MAY_IMPORT
        assert all(a in PACKAGE_NAMES for a in allowed), (package, allowed)


def test_spec_builds_on_nothing_above_it():
    above = [f"{m} -> {t}" for m in MODULES if m.startswith("spec") for t in GRAPH[m] if not t.startswith("spec")]
    assert above == []


def reexports(path: Path) -> list[str]:
    """Names a module hands on from another: `import x as x`, a module-level alias of an import, `__all__`
    listing imported names."""
    tree = ast.parse(path.read_text())
    imported: set[str] = set()
    found = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                imported.add(a.asname or a.name)
                if a.asname == a.name:
                    found.append(f"{a.name} (import ... as itself)")
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
            if isinstance(value, ast.Name) and value.id in imported:
                found.append(f"{name} = {value.id}")
            if name == "__all__" and isinstance(value, (ast.List, ast.Tuple)):
                found += [f"__all__ names {e.value}" for e in value.elts
                          if isinstance(e, ast.Constant) and e.value in imported]
    return found


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m not in FACADES + ASSEMBLED), ids=str)
def test_no_module_reexports_what_another_owns(module):
    assert reexports(MODULES[module]) == [], f"import these from the module that defines them: {module}"


def test_the_reexport_check_sees_a_shim(tmp_path):
    shim = tmp_path / "m.py"
    shim.write_text("from conformance.adapters import LoadError as LoadError\nfrom spec import rules\nold = rules\n"
                    "__all__ = ['rules']\n")
    assert len(reexports(shim)) == 3
