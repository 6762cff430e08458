"""One self-contained module from several of the project's files, for where the project cannot be imported.

The sandbox child runs conformance/sandbox/child.py with spec/loop.py (the project is hidden in the
sandbox), and a mutant submission is spec/errors.py, spec/model.py, spec/rules.py and
conformance/mutants/shim.py in one file. ``one_module`` keeps each text's code in the order given,
drops each docstring and every import of the project's own packages, and puts the other imports
once at the top (read from the syntax tree, so an import may span lines), so the result imports
only the standard library.
"""

from __future__ import annotations

import ast

PROJECT = ("spec", "conformance", "impl")  # packages whose imports are dropped: their code is in the texts


def body(text: str, imports: dict[str, set[str]]) -> str:
    """A module's text without its docstring and top-level imports; its imports from outside the project go
    into `imports` (module -> names; an empty set for a plain ``import module``)."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    dropped: set[int] = set()  # 0-based line numbers
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        dropped.update(range(first.end_lineno or 0))
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                imports.setdefault(alias.name if alias.asname is None else f"{alias.name} as {alias.asname}", set())
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module != "__future__" and node.module.partition(".")[0] not in PROJECT:
                imports.setdefault(node.module, set()).update(
                    a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names)
        else:
            continue
        dropped.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    kept = [line for i, line in enumerate(lines) if i not in dropped]
    return "".join(kept).strip("\n") + "\n"


def import_block(imports: dict[str, set[str]]) -> str:
    """The imports of every part, once each, sorted as ruff sorts them (plain imports first)."""
    plain = [f"import {m}\n" for m in sorted(m for m, names in imports.items() if not names)]
    froms = [f"from {m} import {', '.join(sorted(names))}\n" for m, names in sorted(imports.items()) if names]
    return "".join(plain + froms)


def one_module(texts: list[str], doc: str, future: bool = False) -> str:
    """The texts as one module with docstring `doc`; `future`: with ``from __future__ import annotations``."""
    imports: dict[str, set[str]] = {}
    bodies = "\n\n".join(body(t, imports) for t in texts)
    head = "from __future__ import annotations\n\n" if future else ""
    return f'"""{doc}"""\n\n{head}{import_block(imports)}\n\n' + bodies
