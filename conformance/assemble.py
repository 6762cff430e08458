"""One self-contained module from several of the project's files, for where the project cannot be imported.

The sandbox child runs conformance/sandbox/child.py with spec/loop.py (the project is hidden in the
sandbox), and a mutant submission is spec/errors.py, spec/model.py, spec/rules.py and
conformance/mutants/shim.py in one file. ``one_module`` keeps each text's code in the order given,
drops each docstring and every import of the project's own packages, and puts the other imports
once at the top, so the result imports only the standard library.
"""

from __future__ import annotations

import ast

PROJECT = ("spec", "conformance", "impl")  # packages whose imports are dropped: their code is in the texts


class AssemblyError(ValueError):
    """A text cannot be assembled: an import spans lines, so it cannot be moved."""


def body(text: str, imports: dict[str, set[str]]) -> str:
    """A module's text without its docstring and imports; its imports from outside the project go into `imports`."""
    tree = ast.parse(text)
    first = tree.body[0] if tree.body else None
    lines = text.splitlines(keepends=True)
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines = lines[first.end_lineno or 0:]
    kept = []
    for line in lines:
        if line.startswith(("import ", "from ")) and line.rstrip().endswith(("(", "\\")):
            raise AssemblyError(f"cannot assemble {line.strip()!r}: it spans lines; keep the imports of the "
                                "files assembled into one module (conformance/assemble.py) on one line each")
        if line.startswith("import "):
            imports.setdefault(line.split()[1], set())
        elif line.startswith("from "):
            module, _, imported = line[len("from "):].partition(" import ")
            if module != "__future__" and module.partition(".")[0] not in PROJECT:
                imports.setdefault(module, set()).update(n.strip() for n in imported.split(","))
        else:
            kept.append(line)
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
