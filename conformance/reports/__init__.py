"""Turn findings into reports: the JSON report and the text tables and replay files of counterexamples."""

MAY_IMPORT: tuple[str, ...] = (  # the packages this one builds on (tests/test_layers.py)
    "spec",
    "conformance",
    "conformance.checks",
)
