"""Hypothesis profiles for the test suite: derandomized, so every run sees the same examples.

SCHEDCHECK_HYPOTHESIS_PROFILE=thorough multiplies every property test's example count
by THOROUGH_FACTOR (see ``examples``), for a long run before a release.
"""

import os

from hypothesis import HealthCheck, settings

# grading draws held-out cases from a secret seed, made in the user's home on first use: the tests use
# their own, so they are deterministic and never write there
os.environ.setdefault("SCHEDCHECK_HELD_OUT_SEED", "20261201")

THOROUGH_FACTOR = 10
PROFILE = os.environ.get("SCHEDCHECK_HYPOTHESIS_PROFILE", "default")
if PROFILE not in ("default", "thorough"):
    raise ValueError(f"SCHEDCHECK_HYPOTHESIS_PROFILE must be 'default' or 'thorough', got {PROFILE!r}")

settings.register_profile("default", derandomize=True, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", parent=settings.get_profile("default"))
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """The example count of a property test: n by default, THOROUGH_FACTOR * n under the thorough profile."""
    return n * THOROUGH_FACTOR if PROFILE == "thorough" else n
