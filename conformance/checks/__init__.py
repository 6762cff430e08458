"""Judge observed runs: pure checkers, probes, the per-workload pipeline, the state machine, the shrinker."""

MAY_IMPORT: tuple[str, ...] = (  # the packages this one builds on (tests/test_layers.py)
    "spec",
    "conformance",
    "conformance.workloads",
    "conformance.mutants",
)
