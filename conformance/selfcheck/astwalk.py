"""Where things are in a syntax tree, for the mutator (mutate.py): walk order, blocks, docstrings.

Each function reads an `ast` tree without changing it, except `replace_child`, which swaps one
child node for another in place.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator


def walk(tree: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    """List (node, parent) in a fixed depth-first order: the order of the fields in the source."""
    out: list[tuple[ast.AST, ast.AST | None]] = []

    def visit(node: ast.AST, parent: ast.AST | None) -> None:
        out.append((node, parent))
        for child in ast.iter_child_nodes(node):
            visit(child, node)

    visit(tree, None)
    return out


def is_docstring(node: ast.AST, parent: ast.AST | None) -> bool:
    body = getattr(parent, "body", None)
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str) and isinstance(body, list) and bool(body) and body[0] is node)


def statement_lists(parent: ast.AST) -> Iterator[list[ast.stmt]]:
    for name in ("body", "orelse", "finalbody"):
        value = getattr(parent, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value


def block_of(node: ast.stmt, parent: ast.AST | None) -> list[ast.stmt] | None:
    if parent is None:
        return None
    for block in statement_lists(parent):
        if any(item is node for item in block):
            return block
    return None


def is_plain_init_of(cls_name: str, node: ast.AST, parents: dict[int, ast.AST | None]) -> bool:
    """True for `self.x = ...` directly in `<cls_name>.__init__`: deleting it is trivially fatal."""
    func = parents.get(id(node))
    cls = parents.get(id(func)) if func is not None else None
    return (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(func, ast.FunctionDef)
            and func.name == "__init__" and isinstance(cls, ast.ClassDef) and cls.name == cls_name)


def inside_annotation(node: ast.AST, parents: dict[int, ast.AST | None]) -> bool:
    child: ast.AST | None = node
    parent = parents.get(id(node))
    while parent is not None:
        if isinstance(parent, ast.AnnAssign) and child is parent.annotation:
            return True
        if isinstance(parent, ast.arg) and child is parent.annotation:
            return True
        if isinstance(parent, ast.FunctionDef) and child is parent.returns:
            return True
        child, parent = parent, parents.get(id(parent))
    return False


def int_index(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) is int):
        return -node.operand.value
    return None


def replace_child(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
            return
        if isinstance(value, list):
            for k, item in enumerate(value):
                if item is old:
                    value[k] = new
                    return
    raise ValueError(f"node {ast.dump(old)[:60]} is not a child of {type(parent).__name__}; the walk is stale")
