"""Profiles are monotonic: what a profile finds, every profile built on it finds.

By construction (conformance/profiles.py): a profile runs exactly its base's stages
first, same sources, same seeds, then more. The first tests check the construction;
the slow one checks the consequence on every catalog mutant.
"""

import pytest

from conformance.catalog import CATALOG
from conformance.profiles import PROFILES, Profile, Stage
from conformance.suite import run
from tests.mutants.pin import HONEST

ORDER = ("quick", "default", "thorough")


def failing(report):
    return {name for name, c in report.checks.items() if c.status == "fail"}


@pytest.mark.parametrize("lower,higher", [("quick", "default"), ("default", "thorough"), ("quick", "thorough")])
def test_a_profile_starts_with_the_stages_of_the_one_below(lower, higher):
    low, high = PROFILES[lower].stages(), PROFILES[higher].stages()
    assert high[:len(low)] == low
    assert len(high) > len(low)


def test_every_profile_is_built_on_the_one_below():
    assert [p.base.name if p.base else None for p in (PROFILES[n] for n in ORDER)] == [None, "quick", "default"]


def test_stages_of_a_base_are_not_repeated_with_the_same_seed():
    """The higher profile's own Hypothesis stages use another seed, so they add workloads."""
    for name in ORDER[1:]:
        prof = PROFILES[name]
        own = {(s.source, s.seed) for s in prof.own_stages() if s.source in ("edge", "scale")}
        below = {(s.source, s.seed) for s in prof.base.stages() if s.source in ("edge", "scale")}
        assert own and not own & below, (name, own, below)


def test_a_mutant_the_lower_profile_catches_in_one_check_the_higher_catches_too():
    """The case that once broke: stateful caught no_admission_after_preemption under a smaller machine run only."""
    low = Profile("low", None, 0, 15, 20)
    high = Profile("high", None, 0, 45, 30, base=low, seed=2)
    assert high.stages()[0] == Stage("machine", 15, 20)
    target = "conformance/mutants/no_admission_after_preemption.py"
    found_low = failing(run(target, low, families=(), diagnose=False))
    found_high = failing(run(target, high, families=(), diagnose=False))
    assert "stateful" in found_low
    assert found_low <= found_high


@pytest.mark.slow
@pytest.mark.parametrize("name", [bug.name for bug in CATALOG])
def test_quick_findings_are_kept_by_default(name):
    target = f"conformance/mutants/{name}.py"
    quick = failing(run(target, "quick", families=HONEST, diagnose=False))
    default = failing(run(target, "default", families=HONEST, diagnose=False))
    assert quick and quick <= default, (name, quick, default)
