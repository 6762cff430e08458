"""Held-out cases: workloads no student has seen, drawn from a seed only the instructor holds.

The corpus ships with the tool, so its answers can be recorded ahead of time and replayed by a
module with no scheduler in it. Every grade therefore also runs edge-biased workloads drawn from
a secret seed, and an item scores the lower of its pass rates on the public cases and on the
held-out cases in its scope (conformance.grading.scoring): a scheduler does as well on both, a
recording does not. The same seed gives the same cases, so regrades agree.

The seed comes from SCHEDCHECK_HELD_OUT_SEED, else from this machine's seed file, made once with
fresh random bytes and readable by its owner only. `schedcheck grade` resolves it once and hands
it to its workers through the environment; a Gradescope image carries its own (make_zip.sh).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from functools import lru_cache
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

from conformance.grading.observe import HELD_OUT, Case
from conformance.workloads.corpus import features
from conformance.workloads.generators import edge_workloads
from spec.trace import Workload

SEED_ENV = "SCHEDCHECK_HELD_OUT_SEED"
SEED_FILE = Path.home() / ".config" / "schedcheck" / "held-out-seed"


class SeedError(ValueError):
    """The held-out seed is malformed; the message names where it came from."""


def held_out_seed(seed_file: Path = SEED_FILE) -> tuple[int, str]:
    """The secret seed and where it came from; made (owner-only) on first use when nothing names one."""
    text, where = os.environ.get(SEED_ENV), f"${SEED_ENV}"
    if text is None:
        where = str(seed_file)
        if not seed_file.exists():
            seed_file.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(seed_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(f"{secrets.randbits(128)}\n")
        text = seed_file.read_text()
    try:
        value = int(text.strip())
    except ValueError:
        raise SeedError(f"the held-out seed in {where} must be a decimal integer, got {text.strip()[:40]!r}; "
                        f"set {SEED_ENV} or delete {seed_file} to make a new one") from None
    return value, where


def fingerprint(value: int) -> str:
    """A short digest that tells two seeds apart in a summary without revealing either."""
    return hashlib.sha256(str(value).encode()).hexdigest()[:12]


@lru_cache(maxsize=4)
def held_out_cases(value: int, count: int) -> tuple[Case, ...]:
    """The first `count` distinct edge-biased workloads drawn from the seed, as cases tagged "held-out"."""
    drawn: list[Workload] = []

    @seed(value)
    @settings(max_examples=count * 2, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(edge_workloads())
    def draw(w: Workload) -> None:
        drawn.append(w)

    draw()
    unique = list(dict.fromkeys(drawn))[:count]
    return tuple(Case(f"{HELD_OUT}/{k:03d}", w, (HELD_OUT, *sorted(set(w.tags) | set(features(w)))))
                 for k, w in enumerate(unique))
