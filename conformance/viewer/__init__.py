"""Pictures of a run: the card's KV block strips and a self-contained HTML trace viewer."""

MAY_IMPORT: tuple[str, ...] = ("spec", "conformance")  # the packages this one builds on (tests/test_layers.py)
