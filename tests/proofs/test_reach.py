"""Reach: at the quick bound every claim's premise holds at a step of every kind a run there can have."""

import pytest

from spec.bounded import claims, reach
from spec.bounded.cli import QUICK


@pytest.fixture(scope="module")
def row():
    return reach.reach(QUICK, ("LIVE", "NP", "OUT"))


@pytest.mark.long
def test_every_premise_reaches_every_kind_the_bound_has(row):
    assert row["verdict"] == "reached", row["vacuous"]
    assert set(row["premises"]) == {"LIVE", "OUT"}  # NP judges every step
    assert set(row["premises"]["LIVE"]) == {k for k, v in row["anywhere"].items() if v == "sat"}


@pytest.mark.long
def test_what_two_requests_and_three_steps_cannot_have_is_beyond_the_bound(row):
    """Several victims need three running sequences; an arrival behind a waiting one, a third request."""
    assert {"victims", "arrive_behind"} <= set(row["beyond"]) and "preempt" not in row["beyond"]


@pytest.mark.long
def test_live_as_drained_by_the_bound_alone_is_vacuous_at_k_3(monkeypatch):
    """Its premise (the liveness bound is at most K) admits no preemption within three steps."""
    monkeypatch.setitem(reach.PREMISES, "LIVE", lambda r, k: claims.liveness_bound(r) <= QUICK.steps)
    monkeypatch.setattr(reach, "KINDS", {k: reach.KINDS[k] for k in ("preempt", "finish")})
    r = reach.reach(QUICK, ("LIVE",))
    assert r["verdict"] == "vacuous" and r["premises"]["LIVE"] == {"preempt": "unsat", "finish": "sat"}, r


def test_the_kinds_are_the_validation_quotas_kinds():
    from spec.bounded import quotas
    assert set(reach.KINDS) == set(quotas.KINDS) | set(quotas.POLICY_KINDS)


@pytest.mark.long
def test_ad_is_vacuous_for_readmissions_at_two_requests_and_reached_at_its_own_three(monkeypatch):
    """AD's antecedent (a sequence waits after schedule()) beside a readmission needs a third request: at N=2 the
    row fails on it, which is why AD states slots=3 and `prove --quick` checks it there."""
    from dataclasses import replace

    from spec.bounded import checks
    monkeypatch.setattr(reach, "KINDS", {k: reach.KINDS[k] for k in ("readmit", "preempt")})
    at_two = reach.reach(QUICK, ("AD",), ends=False)
    at_three = reach.reach(checks.at_least(QUICK, "AD"), ("AD",), ends=False)
    assert at_two["verdict"] == "vacuous" and at_two["premises"]["AD"]["readmit"] == "unsat", at_two
    assert at_three["verdict"] == "reached" and checks.at_least(QUICK, "AD") == replace(QUICK, slots=3), at_three
