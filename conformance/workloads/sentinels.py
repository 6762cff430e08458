"""Workloads whose tokens pass through the values a scheduler might use as a marker.

A token is any int (docs/api.md): a scheduler may compare it with `eos` and nothing else. A
submission that stores "no eos" as -1 or 0, clamps to 32 or 64 bits, or tests `eos` for
truth instead of `is None` behaves correctly on every token the usual workloads produce
(100 * i + k) and wrongly on these. Each marker value gets two small workloads: one with no
eos whose outputs run through the value (nothing may finish early), one whose eos is the value
(exactly one sequence reaches it and must finish there; its neighbours never do). They run in
every profile after the generated sources, and in every grade (tagged "token-values").
"""

from __future__ import annotations

from functools import lru_cache

from spec.model import Config
from spec.trace import Request, Workload, make_workload

# every token these make stays within +-2**53, exact in a JSON number anywhere (a JavaScript program over the wire
# included); the scale-large-numbers corpus family goes past it
SENTINELS = (-1, 0, 1, -(2**31), 2**31 - 1, 2**32 - 1, -(2**53) + 8, 2**53 - 8)
TAG = "token-values"


@lru_cache(maxsize=1)
def sentinel_workloads() -> tuple[Workload, ...]:
    out = []
    for s in SENTINELS:
        out.append(make_workload(Config(8, 2, 2, 8), [Request("a1", 3, 3), Request("a2", 2, 4)],
                                 base={"a1": s - 1, "a2": s - 3}, name=f"no-eos-tokens-through-{s}", tags=(TAG,)))
        out.append(make_workload(Config(8, 2, 2, 8, eos=s), [Request("a1", 2, 4), Request("a2", 2, 4)],
                                 base={"a1": s - 2, "a2": s + 1}, name=f"eos-is-{s}", tags=(TAG,)))
    return tuple(out)
