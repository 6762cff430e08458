"""Grading: sandboxed runs of untrusted submissions on the frozen corpus, scored by a rubric."""

MAY_IMPORT: tuple[str, ...] = (  # the packages this one builds on (tests/test_layers.py)
    "spec",
    "conformance",
    "conformance.checks",
    "conformance.cli",
    "conformance.mutants",
    "conformance.reports",
    "conformance.sandbox",
    "conformance.viewer",
    "conformance.wire",
    "conformance.workloads",
)
