"""Grading: sandboxed runs of untrusted submissions on the frozen corpus, scored by a rubric."""
