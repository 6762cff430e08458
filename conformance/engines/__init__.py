"""Adapters for real serving engines, shipped with the suite: ``--adapter conformance.engines.vllm`` and
``--adapter conformance.engines.nanovllm``. Each follows docs/adapters.md; the engines are optional extras."""

MAY_IMPORT: tuple[str, ...] = ("spec", "conformance")  # the packages this one builds on (tests/test_layers.py)
