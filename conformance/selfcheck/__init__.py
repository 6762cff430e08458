"""Self-check of the suite's detection power: style submissions, an AST mutator and a campaign runner."""

MAY_IMPORT: tuple[str, ...] = (  # the packages this one builds on (tests/test_layers.py)
    "conformance", "conformance.mutants")
