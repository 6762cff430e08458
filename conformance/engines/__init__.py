"""Adapters for real serving engines, shipped with the suite: ``--adapter conformance.engines.vllm``,
``conformance.engines.nanovllm`` and ``conformance.engines.sglang``. Each follows docs/adapters.md; the engines
are optional extras. recording.py holds what their explain functions share."""

# the packages this one builds on (tests/test_layers.py): the checks, for what explain judges a rerun by
MAY_IMPORT: tuple[str, ...] = ("spec", "conformance", "conformance.checks")
