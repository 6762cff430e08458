"""Run untrusted submissions in a child process with namespaces, limits and a JSON-only protocol.

Grading's only way to execute student code.
"""

MAY_IMPORT: tuple[str, ...] = ("spec", "conformance")  # the packages this one builds on (tests/test_layers.py)
