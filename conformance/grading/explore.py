"""Workloads beyond the corpus for a grading run: the edge-biased stages of a `check` profile.

The rubric's ``[exploration] profile`` names a profile of conformance/profiles.py; its
edge-biased Hypothesis stages are drawn exactly as `schedcheck check --profile` draws
them (conformance.sources ``stage_cases``), so an exploration finding is one `check`
finds too. They depend on the installed Hypothesis version, which is why their
findings are labelled "exploration" and count only when the rubric says so.
"""

from __future__ import annotations

from functools import lru_cache

from conformance.profiles import PROFILES
from conformance.sources import stage_cases
from spec.trace import Workload


@lru_cache(maxsize=4)
def generated_workloads(profile: str) -> tuple[Workload, ...]:
    """The workloads of the edge-biased stages of `profile`, in the order `check` runs them, each once."""
    drawn = (w for stage in PROFILES[profile].stages() if stage.source == "edge"
             for case in stage_cases(stage) for w in case.workloads)
    return tuple(dict.fromkeys(drawn))
