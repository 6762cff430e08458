"""The conformance suite: checks any scheduler implementation against the reference model.

``conformance.run(target, profile="quick") -> Report`` is the one-call entry point
(``schedcheck check`` on the command line); grading lives in ``conformance.grading``.
"""

from __future__ import annotations

from typing import Any


def run(target: str, profile: str = "default", **kwargs: Any) -> Any:
    """Check `target` (a file path, dotted module, 'spec' or 'impl') and return its Report."""
    from conformance.suite import run as run_suite

    return run_suite(target, profile, **kwargs)

MAY_IMPORT: tuple[str, ...] = ("spec",)  # the packages this one builds on (tests/test_layers.py)
