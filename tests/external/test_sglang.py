"""SGLang's real scheduler through conformance/engines/sglang.py (docs/engines.md, "SGLang").

Needs sglang 0.5.23 installed as `bash tests/external/run.sh sglang` installs it; every test is skipped, saying
why, without it. Besides the adapter's own translation (outputs, eos, idle steps, two instances), the last tests
check that the suite's findings on SGLang are SGLang's: each stated difference on its smallest case, worked out
from SGLang's code, every failing vector of the corpus put down to one, and the report's causes.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from conformance.adapters import LoadError, load_target
from conformance.checks.checkers import differential, expected_trace, hygiene
from conformance.checks.history import instances
from conformance.drivers import run_workload
from spec.model import Config
from spec.trace import Request, make_workload
from tests.external.differences import difference_causes, explained_corpus, first_finding

pytestmark = pytest.mark.external

ADAPTER = "conformance.engines.sglang"


@pytest.fixture(scope="module")
def sg() -> Any:
    if importlib.util.find_spec("sglang") is None:
        pytest.skip("sglang is not installed here: run `bash tests/external/run.sh sglang`, which makes its virtualenv")
    from conformance.engines import sglang
    return sglang


@pytest.fixture(scope="module")
def factory(sg: Any) -> Any:
    return load_target("sglang", ADAPTER)


def test_the_target_is_the_installed_package_and_options_are_checked(sg: Any) -> None:
    with pytest.raises(LoadError, match="give the target 'sglang'"):
        load_target("/somewhere/else", ADAPTER)
    with pytest.raises(LoadError, match="mixed"):
        load_target("sglang", ADAPTER + "?mixed=yes")
    assert sg.load()["version"] == sg.SGLANG_VERSION


def test_one_request_runs_to_the_spec_outputs_on_an_ample_pool(factory: Any) -> None:
    w = make_workload(Config(num_blocks=64, block_size=4, max_num_seqs=2, max_num_batched_tokens=16),
                      [Request("a1", 6, 5)])
    observed = run_workload(w, factory, white_box=False)
    trace = expected_trace(w)
    assert observed["stop"] == "done" and observed["error"] is None
    assert [s["schedule"] for s in observed["steps"]] == [[list(p) for p in s.batch] for s in trace.steps]
    assert observed["outputs"] == {"a1": [100, 101, 102, 103, 104]}
    assert differential(w, observed) == [] and hygiene(w, observed) == []


def test_eos_ends_a_sequence_and_no_eos_ends_nothing(sg: Any, factory: Any) -> None:
    w = make_workload(Config(64, 4, 1, 16, eos=7), [Request("a1", 3, 6)], eos_at={"a1": [1]})
    observed = run_workload(w, factory, white_box=False)
    assert observed["outputs"] == {"a1": [100, 7]} and differential(w, observed) == []
    sut = factory(Config(64, 4, 1, 16), lambda seq_id, out: sg.EOS_ID)  # eos None: SGLang's own eos id ends nothing
    sut.add("a1", 3, 3)
    finished: list[str] = []
    for _ in range(3):
        sut.schedule()
        finished += sut.update()
    assert finished == ["a1"] and sut.outputs() == {"a1": [sg.EOS_ID] * 3}


def test_an_idle_step_and_two_instances_with_their_own_configs(factory: Any) -> None:
    w = make_workload(Config(64, 4, 2, 16), [Request("a1", 2, 1, 1), Request("a2", 2, 1, 4)])
    observed = run_workload(w, factory, white_box=False)
    assert observed["error"] is None and differential(w, observed) == []
    w = make_workload(Config(num_blocks=32, block_size=2, max_num_seqs=1, max_num_batched_tokens=8),
                      [Request("a1", 3, 4), Request("a2", 1, 2, 8)])
    assert instances(w, factory) == []


# --- the findings are SGLang's ---------------------------------------------------------------------------
# Each case is worked out from SGLang 0.5.23's code (paths under sglang/srt/), independently of explain.

def R(seq_id: str, prompt_len: int, max_tokens: int, arrival: int = 1) -> Request:
    return Request(seq_id, prompt_len, max_tokens, arrival)


SMALLEST = {
    # schedule_policy.py add_one_req: a1 reserves 8 + 4 + a page (13 of 16); a2 needs 4 + 4 + 1 < 3: NO_TOKEN.
    # The card admits both at step 1: 12 tokens of a budget of 16, 12 blocks of 16.
    "admission-reserve": (Config(16, 1, 2, 16), [R("a1", 8, 4), R("a2", 4, 4)], "differential", 1),
    # budget16, the card's worked case: s0's 10 tokens are charged as 12 (3 pages of 4), so s1 gets 4, not 6
    "page-charged-chunks": (Config(100, 4, 8, 16), [R("s0", 10, 3), R("s1", 10, 3), R("s2", 10, 3)],
                            "differential", 1),
    # scheduler.py init_req_max_new_tokens: a pool of 6 tokens keeps 2 + max_new + 1 + 1 <= 6, so a1's 4 tokens
    # become 2; a1 finishes at step 2, where the card has it decode to 4 tokens (5 tokens held: it fits)
    "clip-max-tokens": (Config(6, 1, 1, 8), [R("a1", 2, 4)], "differential", 2),
    # scheduler.py get_next_batch_to_run: at step 2 a2's prefill runs alone, a1 (running) does not decode
    "prefill-first": (Config(64, 1, 4, 8), [R("a1", 1, 3), R("a2", 2, 1, 2)], "differential", 2),
    # the adapter refuses a pool past MAX_KV_TOKENS tokens when the scheduler is made
    "engine-size": (Config(2**21, 1, 1, 8), [R("a1", 1, 1)], "hygiene", 0),
}


@pytest.mark.parametrize("name", sorted(SMALLEST))
def test_each_difference_is_explained_on_its_smallest_case(sg: Any, factory: Any, name: str) -> None:
    config, requests, check, step = SMALLEST[name]
    w = make_workload(config, requests)
    f = first_finding(w, factory)
    assert f is not None and (f.check, f.step) == (check, step), f
    assert sg.explain(factory, w, f) == name
    assert name in {d.name for d in sg.DIFFERENCES}


def test_every_finding_on_the_corpus_is_one_of_sglangs_known_differences(sg: Any, factory: Any) -> None:
    causes = explained_corpus(sg.explain, factory)
    assert "None" not in causes, f"findings no known difference explains (the adapter's?): {causes['None'][:3]}"
    assert {"admission-reserve", "page-charged-chunks", "clip-max-tokens", "prefill-first"} <= set(causes)
    assert causes["page-charged-chunks"][:2] == ["budget16", "example1"]


def test_check_names_sglangs_differences_and_no_bug_it_lacks(sg: Any) -> None:
    from conformance.suite import run

    report = run("sglang", "default", adapter=ADAPTER)
    assert report.verdict == "FAIL" and report.error is None
    named = difference_causes(report, sg.DIFFERENCES)
    assert {"admission-reserve", "page-charged-chunks", "clip-max-tokens", "prefill-first"} <= set(named)
    text = " ".join(cx.finding.message for cx in report.counterexamples) + " ".join(report.notes)
    for adapters_own in ("AssertionError", "adapter defect", "H.instances", "could not reproduce"):
        assert adapters_own not in text
