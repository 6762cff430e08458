"""Make one-change mutants of a submission's source with the standard `ast` module.

Each mutant changes exactly one node of the syntax tree (an operator, a
constant, a call, a statement), compiles, and carries a stable id
`<file>:<line>:<col>:<operator>` and a one-line description. The order is
fixed by the source, so the same source always yields the same mutants.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from conformance.selfcheck.astwalk import (
    block_of,
    inside_annotation,
    int_index,
    is_docstring,
    is_plain_init_of,
    replace_child,
    walk,
)

# Operator names, one per kind of change; tests check that each one can fire.
OPERATORS: tuple[str, ...] = (
    "cmp", "binop", "augop", "unary_drop", "const_inc", "const_dec", "bool_flip", "boolop", "loopctl",
    "del_stmt", "deque_end", "pop_end", "popleft_pop", "index_end", "if_neg", "minmax", "unwrap",
)

_CMP_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Lt: (ast.LtE, ast.GtE),      # boundary, negation
    ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE),
    ast.GtE: (ast.Gt, ast.Lt),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}
_SYMBOL: dict[type[ast.AST], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.Add: "+", ast.Sub: "-",
}
_ARITH_SWAPS: dict[type[ast.operator], type[ast.operator]] = {ast.Add: ast.Sub, ast.Sub: ast.Add}
_WRAPPERS = frozenset({"dict", "list", "tuple", "deque", "sorted"})
_Add = Callable[[int, ast.AST, str, str, str], None]   # records one site


@dataclass(frozen=True, slots=True)
class Mutant:
    """One compiled, one-change variant of a source file."""

    mutant_id: str     # "<file>:<line>:<col>:<operator>", unique within the file
    operator: str      # one of OPERATORS
    description: str   # one line: what changed, in source terms
    line: int          # 1-based line of the changed node in the original source
    source: str        # the whole mutated module, unparsed


@dataclass(frozen=True, slots=True)
class _Site:
    """Where and how to change: the node's index in the walk, the operator and its variant."""

    index: int
    operator: str
    variant: str       # operator-specific detail, e.g. "LtE" for a compare swap
    line: int
    col: int
    description: str


def _sites(tree: ast.Module) -> list[_Site]:
    """Every place a mutation operator applies, in walk order (one branch per operator: a table, not logic)."""
    nodes = walk(tree)
    parents = {id(node): parent for node, parent in nodes}
    sites: list[_Site] = []

    def add(index: int, node: ast.AST, operator: str, variant: str, description: str) -> None:
        line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
        sites.append(_Site(index, operator, variant, line, col, description))

    for index, (node, parent) in enumerate(nodes):
        if inside_annotation(node, parents):
            continue
        if isinstance(node, ast.Compare):
            for k, op in enumerate(node.ops):
                for new in _CMP_SWAPS.get(type(op), ()):
                    add(index, node, "cmp", f"{k}:{new.__name__}",
                        f"`{_SYMBOL[type(op)]}` -> `{_SYMBOL[new]}` in `{ast.unparse(node)}`")
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH_SWAPS:
            new_op = _ARITH_SWAPS[type(node.op)]
            add(index, node, "binop", new_op.__name__,
                f"`{_SYMBOL[type(node.op)]}` -> `{_SYMBOL[new_op]}` in `{ast.unparse(node)}`")
        elif isinstance(node, ast.AugAssign) and type(node.op) in _ARITH_SWAPS:
            new_op = _ARITH_SWAPS[type(node.op)]
            add(index, node, "augop", new_op.__name__,
                f"`{_SYMBOL[type(node.op)]}=` -> `{_SYMBOL[new_op]}=` in `{ast.unparse(node)}`")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and not (
                isinstance(node.operand, ast.Constant)):
            add(index, node, "unary_drop", "", f"drop the minus of `{ast.unparse(node)}`")
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            add(index, node, "bool_flip", "", f"`{node.value}` -> `{not node.value}`")
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            # Enum member values and other class-level constants name things; they do not compute.
            owner = parents.get(id(parent)) if isinstance(parent, ast.Assign) else None
            if isinstance(owner, ast.ClassDef):
                continue
            add(index, node, "const_inc", "", f"`{node.value}` -> `{node.value + 1}`")
            add(index, node, "const_dec", "", f"`{node.value}` -> `{node.value - 1}`")
        elif isinstance(node, ast.BoolOp):
            new_bool = "Or" if isinstance(node.op, ast.And) else "And"
            add(index, node, "boolop", new_bool, f"`{'and' if new_bool == 'Or' else 'or'}` -> `{new_bool.lower()}` "
                f"in `{ast.unparse(node)}`")
        elif isinstance(node, (ast.Break, ast.Continue)):
            old, new_ctl = ("break", "continue") if isinstance(node, ast.Break) else ("continue", "break")
            add(index, node, "loopctl", new_ctl, f"`{old}` -> `{new_ctl}`")
        elif isinstance(node, ast.If):
            add(index, node, "if_neg", "", f"negate `if {ast.unparse(node.test)}`")
        elif isinstance(node, ast.Subscript) and int_index(node.slice) in (0, -1):
            new_index = 0 if int_index(node.slice) == -1 else -1
            add(index, node, "index_end", str(new_index), f"`{ast.unparse(node)}` -> index `[{new_index}]`")
        elif isinstance(node, ast.Call):
            _call_sites(index, node, add)
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                                                ast.ClassDef)):
            block = block_of(node, parent)
            if (block is not None and len(block) > 1 and not is_docstring(node, parent)
                    and not is_plain_init_of("Sequence", node, parents)
                    and not (isinstance(parent, ast.ClassDef) and isinstance(node, (ast.Assign, ast.AnnAssign)))):
                first = ast.unparse(node).splitlines()[0]
                add(index, node, "del_stmt", "", f"delete `{first}`")
    return sites


def _call_sites(index: int, node: ast.Call, add: _Add) -> None:
    """Record the call-level operators: deque ends, pop ends, min/max, dropping a copy wrapper."""
    func = node.func
    if isinstance(func, ast.Attribute):
        if func.attr in ("append", "appendleft") and len(node.args) == 1:
            new = "appendleft" if func.attr == "append" else "append"
            add(index, node, "deque_end", new, f"`.{func.attr}(...)` -> `.{new}(...)` in `{ast.unparse(node)}`")
        elif func.attr == "pop" and not node.args:
            add(index, node, "pop_end", "0", f"`{ast.unparse(node)}` -> `.pop(0)`")
        elif func.attr == "pop" and len(node.args) == 1 and int_index(node.args[0]) == 0:
            add(index, node, "pop_end", "", f"`{ast.unparse(node)}` -> `.pop()`")
        elif func.attr == "popleft" and not node.args:
            add(index, node, "popleft_pop", "", f"`{ast.unparse(node)}` -> `.pop()`")
        elif func.attr == "copy" and not node.args and not node.keywords:
            add(index, node, "unwrap", "", f"`{ast.unparse(node)}` -> `{ast.unparse(func.value)}`")
    elif isinstance(func, ast.Name):
        if func.id in ("min", "max"):
            new = "max" if func.id == "min" else "min"
            add(index, node, "minmax", new, f"`{func.id}(...)` -> `{new}(...)` in `{ast.unparse(node)}`")
        elif func.id in _WRAPPERS and len(node.args) == 1 and not node.keywords:
            add(index, node, "unwrap", "", f"`{ast.unparse(node)}` -> `{ast.unparse(node.args[0])}`")


def _apply(tree: ast.Module, site: _Site) -> None:
    """Change the node at `site.index` of `tree` in place."""
    node, parent = walk(tree)[site.index]
    op, variant = site.operator, site.variant
    if op == "cmp":
        assert isinstance(node, ast.Compare)
        k, name = variant.split(":")
        node.ops[int(k)] = getattr(ast, name)()
    elif op in ("binop", "augop", "boolop"):
        node.op = getattr(ast, variant)()  # type: ignore[attr-defined]
    elif op == "unary_drop":
        assert isinstance(node, ast.UnaryOp) and parent is not None
        replace_child(parent, node, node.operand)
    elif op in ("const_inc", "const_dec", "bool_flip"):
        assert isinstance(node, ast.Constant) and isinstance(node.value, int)
        node.value = (not node.value) if op == "bool_flip" else node.value + (1 if op == "const_inc" else -1)
    elif op == "loopctl":
        assert parent is not None
        replace_child(parent, node, ast.copy_location(ast.Break() if variant == "break" else ast.Continue(), node))
    elif op == "if_neg":
        assert isinstance(node, ast.If)
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
    elif op == "index_end":
        assert isinstance(node, ast.Subscript)
        node.slice = ast.parse(variant, mode="eval").body
    elif op == "deque_end":
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        node.func.attr = variant
    elif op == "pop_end":
        assert isinstance(node, ast.Call)
        node.args = [ast.Constant(0)] if variant == "0" else []
    elif op == "popleft_pop":
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        node.func.attr = "pop"
    elif op == "minmax":
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        node.func.id = variant
    elif op == "unwrap":
        assert isinstance(node, ast.Call) and parent is not None
        inner = node.func.value if isinstance(node.func, ast.Attribute) else node.args[0]
        replace_child(parent, node, inner)
    elif op == "del_stmt":
        assert isinstance(node, ast.stmt) and parent is not None
        block = block_of(node, parent)
        assert block is not None
        block.remove(node)
    else:
        raise ValueError(f"unknown mutation operator {op!r}; use one of {', '.join(OPERATORS)}")


def mutants(source: str, filename: str) -> Iterator[Mutant]:
    """Yield every one-change mutant of `source` that compiles and differs from it, in source order.

    `filename` is only used in ids and compile errors (give the base name, e.g. "heap_queue.py").
    """
    tree = ast.parse(source, filename=filename)
    baseline = ast.unparse(tree)
    seen_ids: dict[str, int] = {}
    seen_sources = {baseline}
    for site in sorted(_sites(tree), key=lambda s: (s.line, s.col, s.operator, s.variant, s.index)):
        mutated = copy.deepcopy(tree)
        _apply(mutated, site)
        ast.fix_missing_locations(mutated)
        text = ast.unparse(mutated)
        if text in seen_sources:
            continue
        try:
            compile(text, filename, "exec")
        except SyntaxError:
            continue
        seen_sources.add(text)
        base = f"{filename}:{site.line}:{site.col}:{site.operator}"
        if site.variant:
            base += "_" + site.variant.replace(":", "").replace("-", "m")
        count = seen_ids.get(base, 0) + 1
        seen_ids[base] = count
        mutant_id = base if count == 1 else f"{base}#{count}"
        yield Mutant(mutant_id, site.operator, site.description, site.line, text)
