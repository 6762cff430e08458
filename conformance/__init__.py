"""The conformance suite: checks any scheduler implementation against the reference model."""
