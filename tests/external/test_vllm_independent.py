"""vLLM through an adapter written from the docs alone (tests/external/independent/blind_vllm.py, which never read
conformance/engines/vllm.py): with vLLM's defaults and with scheduler_reserve_full_isl off, it passes `default`
under the policy the adapter reports, and fails under the card with one named cause, as the project's adapter does.
Runs where `bash tests/external/run.sh vllm` installed vLLM."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.external

ADAPTER = "tests.external.independent.blind_vllm"


@pytest.fixture(scope="module", autouse=True)
def _vllm() -> None:
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vllm is not installed here: run `bash tests/external/run.sh vllm`, which makes its virtualenv")


@pytest.mark.parametrize(("option", "policy"), [("", "vllm-v1"), ("?reserve_full_isl=false",
                                                                    "vllm-v1:reserve_full_isl=false")])
def test_an_outside_adapter_passes_default_under_the_policy_it_reports(option: str, policy: str) -> None:
    from conformance.suite import run

    report = run("vllm", "default", adapter=ADAPTER + option)
    assert str(report.policy) == policy and report.verdict == "PASS", report.summary()


@pytest.mark.parametrize(("option", "cause"), [("", "policy:vllm-v1"),
                                               ("?reserve_full_isl=false", "no_admission_after_preemption")])
def test_an_outside_adapter_fails_under_the_card_with_one_named_cause(option: str, cause: str) -> None:
    from conformance.suite import run
    from spec.model import Policy

    report = run("vllm", "quick", adapter=ADAPTER + option, policy=Policy("p07"))
    assert report.verdict == "FAIL" and report.error is None
    assert [c["bugs"] for c in report.diagnosis["causes"]] == [[cause]], report.diagnosis["lines"]
