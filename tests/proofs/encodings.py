"""The validation's encodings, built once per test process and shared by the tests that compare with them.

Building a `validate.Validator` unrolls the z3 encoding and compiles its terms: about two seconds for the
stream's bounds. The encoding depends on the bounds alone; the rules it is compared with are only run by
`Validator.compare` (its `rules`). So `validate.Validator(bounds, rules)` is `encoding(bounds)` with its `rules`
set, which `compared_with` does and undoes. A test that patches the encoding itself (transition.Run, blocks_for)
must build its own Validator instead.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import spec.rules
from spec import faults
from spec.bounded import validate
from spec.bounded.encode import Bounds
from spec.faults import Edit


@functools.cache
def encoding(bounds: Bounds = validate.STREAM, fault: str | None = None) -> validate.Validator:
    """`validate.Validator(bounds, fault=fault)`, compared with spec/rules.py: the one `validate.validate(bounds=...)`
    builds."""
    return validate.Validator(bounds, fault=fault)


@contextlib.contextmanager
def compared_with(rules: types.ModuleType, bounds: Bounds = validate.STREAM,
                  fault: str | None = None) -> Iterator[validate.Validator]:
    """`validate.Validator(bounds, rules, fault)`, without building it again; spec.rules is put back afterwards."""
    v = encoding(bounds, fault)
    v.rules = rules
    try:
        yield v
    finally:
        v.rules = spec.rules


def patched(module: types.ModuleType, edits: tuple[Edit, ...], name: str) -> types.ModuleType:
    """A fresh copy of a module of spec/ (the encoding, the claims, the statements) with `edits` applied to its text."""
    path = Path(module.__file__ or "")
    copy = types.ModuleType(f"{module.__name__}_with_{name}")
    copy.__file__ = str(path)
    sys.modules[copy.__name__] = copy  # dataclasses look their module up there
    exec(compile(faults.apply_edits(path.read_text(), edits, name), f"{path} [{name}]", "exec"), copy.__dict__)
    return copy
