"""The catalog's known bugs as submissions, each built from the one place its bug is stated (build.py)."""

MAY_IMPORT: tuple[str, ...] = ("spec", "conformance")  # the packages this one builds on (tests/test_layers.py)
