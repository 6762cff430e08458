"""Workloads beyond the corpus for a grading run: derandomized, edge-biased, the same on every run.

They depend on the installed Hypothesis version, which is why their findings are
labelled "exploration" and count only when the rubric says so.
"""

from __future__ import annotations

from functools import lru_cache

from hypothesis import HealthCheck, Phase, given, settings

from conformance.workloads.generators import edge_workloads
from spec.trace import Workload


@lru_cache(maxsize=4)
def generated_workloads(n: int) -> tuple[Workload, ...]:
    """The first n edge-biased workloads of a derandomized generation."""
    out: list[Workload] = []

    @settings(max_examples=n, derandomize=True, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(edge_workloads())
    def draw(w: Workload) -> None:
        out.append(w)

    draw()
    return tuple(dict.fromkeys(out))[:n]
