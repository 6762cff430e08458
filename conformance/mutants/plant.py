"""Load a mutant in process as a subclass of one shared reference Scheduler that overrides only what its bug changes.

``plant(globals(), name)`` is all each conformance/mutants/<name>.py does. The reference is
``build.source(None)`` run once; the mutant's code is ``build.source(name)`` run in a copy of
the reference's namespace, with the model (spec/errors.py, spec/model.py) and the API classes
kept the reference's own, so values pass between the two. The planted Scheduler overrides a
rule it binds (``_schedule`` = schedule, ...) when the rule, or a function it reaches, differs
from the reference, and a method when its code or what it reaches differs. So mutants compose
like hand-written subclasses: ``class Scheduler(ToTail, EosFirst)`` has both bugs, as long as
they change different rules (tests/conformance/test_diagnosis.py builds such a submission).
"""

from __future__ import annotations

import ast
import functools
from typing import Any

from conformance.mutants.build import PARTS, source
from spec.faults import FaultError

SHELL_SHARED = ("SequenceStatus", "Sequence", "STATUS")  # the API classes every planted mutant shares


def _top(tree: ast.Module) -> dict[str, ast.stmt]:
    """Each top-level definition by the name it binds."""
    out: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node
    return out


def _shared() -> frozenset[str]:
    """The names of the model and of the API classes, which a planted mutant must not change."""
    model = [_top(ast.parse(part.read_text())) for part in PARTS[:2]]
    return frozenset(name for defs in model for name in defs) | frozenset(SHELL_SHARED)


def _reaches(node: ast.AST, defs: dict[str, ast.stmt]) -> set[str]:
    """The top-level names `node` uses, and the ones they use, transitively."""
    seen: set[str] = set()
    todo = [node]
    while todo:
        for sub in ast.walk(todo.pop()):
            if isinstance(sub, ast.Name) and sub.id in defs and sub.id not in seen:
                seen.add(sub.id)
                todo.append(defs[sub.id])
    return seen


@functools.cache
def reference() -> dict[str, Any]:
    """The namespace of the reference submission (no bug), made once per process."""
    namespace: dict[str, Any] = {"__name__": "conformance.mutants.reference"}
    exec(compile(source(None), "<reference: conformance/mutants/build.py>", "exec", dont_inherit=True), namespace)
    return namespace


def plant(namespace: dict[str, Any], name: str | None) -> None:
    """Define in `namespace` the reference's names and a Scheduler that carries bug `name` (None: no bug)."""
    if name is None:
        namespace.update({k: v for k, v in reference().items() if not k.startswith("__")})
        return
    base_tree, tree = ast.parse(source(None)), ast.parse(source(name))
    base_defs, defs = _top(base_tree), _top(tree)
    changed = {n for n, node in defs.items() if n not in base_defs or ast.dump(node) != ast.dump(base_defs[n])}
    shared = _shared()
    if changed & shared:
        raise FaultError(f"mutant {name!r} changes {sorted(changed & shared)}, which every planted mutant shares; "
                         "write it to a file with conformance.mutants.build.source() instead")
    ref = reference()
    code: dict[str, Any] = dict(ref)
    own = ast.Module(body=[n for n in tree.body if not (isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.Assign))
                                                        and set(_top(ast.Module([n], []))) & shared)],
                     type_ignores=[])
    exec(compile(own, f"<mutant {name}: conformance/mutants/build.py>", "exec", dont_inherit=True), code)
    code.update({n: ref[n] for n in shared if n in ref})
    base_cls, cls = base_defs["Scheduler"], defs["Scheduler"]
    assert isinstance(base_cls, ast.ClassDef) and isinstance(cls, ast.ClassDef)
    base_members, members = _top(ast.Module(base_cls.body, [])), _top(ast.Module(cls.body, []))
    overrides: dict[str, Any] = {}
    for member, node in members.items():
        reached = _reaches(node, base_defs) - {"Scheduler"}
        if member not in base_members or ast.dump(node) != ast.dump(base_members[member]) or reached & changed:
            overrides[member] = code["Scheduler"].__dict__[member]
    planted = type("Scheduler", (ref["Scheduler"],), {"__module__": namespace.get("__name__"),
                                                    "__qualname__": "Scheduler", **overrides})
    namespace.update({k: v for k, v in ref.items() if not k.startswith("__")})
    namespace["Scheduler"] = planted
