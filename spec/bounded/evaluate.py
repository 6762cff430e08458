"""Evaluate the encoding's terms on fixed inputs without a solver, for fast translation validation.

With every input fixed, each named term of an unrolled run (``Run.defs``: v == t)
has one value. ``Compiled`` turns the term DAG into one Python function once;
calling it on the inputs gives every value in milliseconds, where a solver call
takes about half a second. The operators follow z3's semantics for the cases the
encoding uses (integer division and modulo by positive constants are floor
division and Python's %). ``spec.bounded.validate`` checks this evaluator
against the solver itself on part of the stream, so it is not trusted blindly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import z3

Value = int | bool

_BINARY = {z3.Z3_OP_SUB: "-", z3.Z3_OP_MUL: "*", z3.Z3_OP_IDIV: "//", z3.Z3_OP_MOD: "%", z3.Z3_OP_LT: "<",
           z3.Z3_OP_LE: "<=", z3.Z3_OP_GT: ">", z3.Z3_OP_GE: ">=", z3.Z3_OP_EQ: "==", z3.Z3_OP_IFF: "=="}


class Compiled:
    """The values of `outputs` as a function of the free constants, given definitions `v == t`."""

    def __init__(self, defs: Iterable[z3.BoolRef], outputs: Iterable[z3.ExprRef]) -> None:
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self.free: dict[str, str] = {}  # constant name -> local
        defined: dict[int, z3.ExprRef] = {}
        for d in defs:
            lhs, rhs = d.arg(0), d.arg(1)
            if not _is_constant(lhs):  # z3 may print and store `0 == v` for `v == 0`
                lhs, rhs = rhs, lhs
            defined[lhs.get_id()] = rhs
        self.defined = defined
        outs = list(outputs)
        for o in outs:
            self._node(o)
        self.outputs = [(o.get_id(), self.names[o.get_id()]) for o in outs]
        body = "\n".join(f"    {line}" for line in self.lines)
        ret = ", ".join(f"{i}: {n}" for i, n in self.outputs)
        src = f"def _f(env):\n{body or '    pass'}\n    return {{{ret}}}\n"
        scope: dict[str, object] = {}
        exec(compile(src, "<encoding>", "exec"), scope)
        self.function: Callable[[dict[str, Value]], dict[int, Value]] = scope["_f"]  # type: ignore[assignment]

    def _node(self, root: z3.ExprRef) -> str:
        stack: list[tuple[z3.ExprRef, bool]] = [(root, False)]
        while stack:
            e, ready = stack.pop()
            i = e.get_id()
            if i in self.names:
                continue
            kids = self._children(e)
            if not ready:
                stack.append((e, True))
                stack.extend((k, False) for k in kids if k.get_id() not in self.names)
                continue
            name = f"n{i}"
            self.lines.append(f"{name} = {self._expr(e, [self.names[k.get_id()] for k in kids])}")
            self.names[i] = name
        return self.names[root.get_id()]

    def _children(self, e: z3.ExprRef) -> list[z3.ExprRef]:
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            rhs = self.defined.get(e.get_id())
            return [rhs] if rhs is not None else []
        return [e.arg(j) for j in range(e.num_args())]

    def _expr(self, e: z3.ExprRef, args: list[str]) -> str:
        k = e.decl().kind()
        if k == z3.Z3_OP_UNINTERPRETED and e.num_args() == 0:
            if args:  # a named term: its definition's value
                return args[0]
            return f"env[{str(e)!r}]"
        if z3.is_int_value(e):
            return str(e.as_long())
        if k == z3.Z3_OP_TRUE:
            return "True"
        if k == z3.Z3_OP_FALSE:
            return "False"
        if k == z3.Z3_OP_ITE:
            return f"({args[1]} if {args[0]} else {args[2]})"
        if k == z3.Z3_OP_ADD:
            return "(" + " + ".join(args) + ")"
        if k == z3.Z3_OP_UMINUS:
            return f"(-{args[0]})"
        if k == z3.Z3_OP_AND:
            return "(" + " and ".join(args) + ")" if args else "True"
        if k == z3.Z3_OP_OR:
            return "(" + " or ".join(args) + ")" if args else "False"
        if k == z3.Z3_OP_NOT:
            return f"(not {args[0]})"
        if k == z3.Z3_OP_DISTINCT:
            return f"({args[0]} != {args[1]})"
        if k == z3.Z3_OP_IMPLIES:
            return f"((not {args[0]}) or {args[1]})"
        if k in _BINARY and len(args) == 2:
            return f"({args[0]} {_BINARY[k]} {args[1]})"
        raise ValueError(f"the evaluator does not know the operator of {e.sexpr()[:80]}; add it to "
                         "spec/bounded/evaluate.py")

    def __call__(self, env: dict[str, Value]) -> dict[int, Value]:
        return self.function(env)


def _is_constant(e: z3.ExprRef) -> bool:
    return bool(z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED)


class Values:
    """A model-like view of evaluated terms: ``eval(term)`` gives a z3 value, as ``witness.val`` expects."""

    def __init__(self, values: dict[int, Value]) -> None:
        self.values = values

    def eval(self, t: z3.ExprRef, model_completion: bool = True) -> z3.ExprRef:
        v = self.values[t.get_id()]
        return z3.BoolVal(v) if isinstance(v, bool) else z3.IntVal(v)
