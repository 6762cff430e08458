"""Benchmarks of impl against the floor (the least work the API requires) and the spec; run `python -m bench`."""

MAY_IMPORT: tuple[str, ...] = (  # the packages this one builds on (tests/test_layers.py)
    "spec",
    "impl",
    "conformance",
    "conformance.grading",
)
