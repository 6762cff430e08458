"""Held-out cases are as hard as the public corpus, for every bug of the catalog.

If they were easier (they were once drawn by one small generator: a bug failed 15% of them and 47% of
the public cases), a module that replays recorded public answers, with a buggy scheduler behind it,
would score better than the bug alone, since an item scores the lower of its two pass rates. Each
catalog bug is run black box on every public vector and on 240 held-out cases of one submission key;
the two failing shares must agree within four standard errors of their difference (24 bugs: a false
alarm at 4 sigma is a chance of about 1 in 650).
"""

from __future__ import annotations

import math

import pytest

from conformance.catalog import CATALOG
from conformance.checks import checkers
from conformance.checks.diagnosis import mutant_factory
from conformance.drivers import run_workload
from conformance.grading.heldout import held_out_cases, public_vectors
from spec.trace import Workload

pytestmark = pytest.mark.long
HELD = 240
KEY = 0x5EED


def failing_share(workloads: list[Workload], name: str) -> float:
    factory = mutant_factory(name)
    assert factory is not None, name
    bad = 0
    for w in workloads:
        observed = run_workload(w, factory, white_box=False)
        bad += bool(checkers.differential(w, observed) or checkers.liveness(w, observed))
    return bad / len(workloads)


def test_every_catalog_bug_fails_held_out_cases_about_as_often_as_public_ones() -> None:
    public = [v.workload for v in public_vectors()]
    held = [c.workload for c in held_out_cases(KEY, HELD)]
    assert len(held) == HELD
    far = []
    for bug in CATALOG:
        p, q = failing_share(public, bug.name), failing_share(held, bug.name)
        pooled = (p * len(public) + q * len(held)) / (len(public) + len(held))
        se = math.sqrt(pooled * (1 - pooled) * (1 / len(public) + 1 / len(held)))
        if abs(p - q) > 4 * se + 1e-9:
            far.append(f"{bug.name}: fails {p:.1%} of the public cases and {q:.1%} of the held-out ones")
    assert not far, far
