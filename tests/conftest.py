"""Hypothesis profiles for the test suite: derandomized, so every run sees the same examples."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", derandomize=True, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=20_000)
settings.load_profile(os.environ.get("SCHEDCHECK_HYPOTHESIS_PROFILE", "default"))
