"""The exploration of a grade is the edge-biased stages of the `check` profile its rubric names: one profile
object for both commands, no second table of example counts."""

import re
from pathlib import Path

import pytest

from conformance.grading.explore import generated_workloads
from conformance.grading.rubric import DEFAULT_RUBRIC, RubricError, parse_rubric
from conformance.profiles import PROFILES
from conformance.sources import stage_cases

GRADING_MD = Path(__file__).resolve().parents[2] / "conformance" / "docs" / "grading.md"


def test_exploration_draws_what_check_draws_under_the_same_profile() -> None:
    for name in ("quick", "default"):  # thorough's stages are default's and one more of the same source
        edge = [w for s in PROFILES[name].stages() if s.source == "edge" for c in stage_cases(s) for w in c.workloads]
        assert generated_workloads(name) == tuple(dict.fromkeys(edge)) and edge, name
    assert set(generated_workloads("quick")) < set(generated_workloads("default")), "profiles are monotonic"


def test_a_rubric_naming_no_profile_is_refused_with_the_field_and_the_value() -> None:
    text = DEFAULT_RUBRIC.read_text().replace('profile = "quick"', 'profile = "fast"')
    with pytest.raises(RubricError, match=r"exploration\.profile .*quick, default, thorough.*'fast'"):
        parse_rubric(text, "r.toml")


def said_counts() -> dict[str, int]:
    said = re.search(r"`conformance/grading/explore.py`: (\S+) in\s+`quick`, (\S+) in `default`, (\S+) in\s+`thorough`",
                     GRADING_MD.read_text())
    assert said is not None, "docs/grading.md no longer says how many workloads each profile explores"
    return dict(zip(("quick", "default", "thorough"), (int(x.replace(",", "")) for x in said.groups()), strict=True))


def test_the_grading_docs_give_the_quick_and_default_profiles_counts() -> None:
    assert [said_counts()[p] for p in ("quick", "default")] == [len(generated_workloads(p)) for p in
                                                                 ("quick", "default")]


@pytest.mark.long
def test_the_grading_docs_give_the_thorough_profiles_count() -> None:
    assert said_counts()["thorough"] == len(generated_workloads("thorough"))  # 2,500 examples drawn: seconds
