"""Where workloads come from: Hypothesis strategies, bounded-exhaustive scopes and the frozen corpus (data/)."""

MAY_IMPORT: tuple[str, ...] = (  # the packages this one builds on (tests/test_layers.py)
    "spec",
    "conformance",
    "conformance.checks",
)
