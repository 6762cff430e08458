"""Pictures of a run: the card's KV block strips and a self-contained HTML trace viewer."""

MAY_IMPORT: tuple[str, ...] = (  # the packages this one builds on (tests/test_layers.py)
    "spec",
    "conformance",
    "conformance.reports",  # a long run's page shows the steps the step table shows (traces.shown_steps)
)
