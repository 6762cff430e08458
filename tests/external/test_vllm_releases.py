"""The vLLM release table (tests/external/vllm_releases.py): docs/engines.md shows the stored record, and, under
``-m external`` with the releases' virtualenvs made (``bash tests/external/run.sh vllm-releases``), each release
still gets the verdicts the record holds."""

from __future__ import annotations

import json

import pytest

from spec.model import Policy, all_policies
from tests.external import vllm_releases as releases


def record() -> dict[str, object]:
    return json.loads(releases.RECORD.read_text())  # type: ignore[no-any-return]


def test_the_docs_table_is_the_records():
    doc = releases.DOC.read_text()
    assert releases.render(doc, record()) == doc, "run `python -m tests.external.vllm_releases` to rewrite it"


def test_the_record_covers_four_releases_each_configuration_under_every_policy():
    rows = record()["releases"]
    assert isinstance(rows, dict)
    checked = [r for r, options in rows.items() if options["defaults"]["vllm-v1"]["verdict"] != "LOAD"]
    assert len(checked) >= 4, checked  # at least four releases driven, not only listed
    for options in rows.values():
        assert set(options) == set(releases.OPTIONS)
        for checks in options.values():
            assert set(checks) == {str(p) for p in all_policies()}


def test_a_release_that_departs_is_shown_with_its_smallest_counterexample():
    fake = {"measured": "2026-12-05", "profile": "quick", "releases": {"9.9.9": {
        "defaults": {"p07": {"verdict": "FAIL"}, "vllm-v1": {"verdict": "FAIL", "rule": "P2.whole", "requests": 2,
                                                             "steps": 3, "message": "step 3: schedule() returned x"},
                     "vllm-v1:reserve_full_isl=false": {"verdict": "PASS"}},
        "reserve_full_isl=0": {"p07": {"verdict": "LOAD", "message": "boom"}, "vllm-v1": {"verdict": "FAIL"},
                               "vllm-v1:reserve_full_isl=false": {"verdict": "LOAD", "message": "no Scheduler"}}}}}
    text = releases.table(fake)
    assert "| 9.9.9 | defaults | `vllm-v1:reserve_full_isl=false` | 2 requests, 3 steps: step 3: schedule() " \
           "returned x [P2.whole] (under `vllm-v1`) |" in text
    assert "| 9.9.9 | reserve_full_isl = 0 | none | not checked: vLLM's scheduler cannot be built here: " \
           "no Scheduler |" in text


@pytest.mark.external
@pytest.mark.parametrize("release", releases.RELEASES)
def test_a_release_still_follows_the_policy_recorded(release):
    if not (releases.venv(release) / "bin" / "python").exists():
        pytest.skip(f"no virtualenv for vllm {release}: bash tests/external/run.sh vllm-releases")
    stored = record()["releases"][release]  # type: ignore[index]
    for option, expected in releases.EXPECTED.items():
        got = releases.check(release, option, Policy.parse(expected))
        assert got.verdict == stored[option][expected]["verdict"], (release, option, got)
