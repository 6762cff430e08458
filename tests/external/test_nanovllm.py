"""nano-vllm's real scheduler through conformance/engines/nanovllm.py (docs/engines.md, "nano-vllm").

Needs a nano-vllm source checkout (env SCHEDCHECK_NANOVLLM, else /work/nano-vllm) and numpy and xxhash;
every test is skipped, saying why, without them. Run: ``bash tests/external/run.sh nanovllm``.

Besides the adapter's own translation (outputs, eos, idle steps, two instances), the last tests check that
the suite's findings on nano-vllm are nano-vllm's: every failing corpus vector's first finding is traced to
one of the known differences by looking at nano-vllm's own state before the step where it diverges.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import LoadError, load_target
from conformance.checks.checkers import Finding, differential, expected_trace, hygiene
from conformance.checks.history import instances
from conformance.drivers import run_workload
from spec.model import Config
from spec.trace import Request, make_workload
from tests.external.differences import difference_causes, explained_corpus, first_finding

pytestmark = pytest.mark.external

ADAPTER = "conformance.engines.nanovllm"
CHECKOUT = Path(os.environ.get("SCHEDCHECK_NANOVLLM", "/work/nano-vllm"))


def _why_skip() -> str | None:
    if not (CHECKOUT / "nanovllm" / "engine" / "scheduler.py").is_file():
        return (f"no nano-vllm checkout at {CHECKOUT} (set SCHEDCHECK_NANOVLLM, or run "
                "`bash tests/external/run.sh nanovllm`, which clones it)")
    missing = [m for m in ("numpy", "xxhash") if importlib.util.find_spec(m) is None]
    return f"nano-vllm's block_manager.py needs {', '.join(missing)}: pip install {' '.join(missing)}" if missing \
        else None


@pytest.fixture(scope="module")
def nv() -> Any:
    why = _why_skip()
    if why is not None:
        pytest.skip(why)
    from conformance.engines import nanovllm
    return nanovllm


@pytest.fixture(scope="module")
def factory(nv: Any) -> Any:
    return load_target(str(CHECKOUT), ADAPTER)


def test_the_adapter_loads_nano_vllm_and_leaves_the_import_state_alone(nv: Any, factory: Any) -> None:
    path_before = list(sys.path)
    engine = nv.load(str(CHECKOUT))
    assert Path(engine.scheduler.__file__).resolve() == (CHECKOUT / "nanovllm/engine/scheduler.py").resolve()
    assert engine.scheduler.Scheduler.__module__ == "nanovllm.engine.scheduler"  # its own name, its real class
    assert not [k for k in sys.modules if k == "nanovllm" or k.startswith("nanovllm.")]
    assert sys.path == path_before and str(CHECKOUT.resolve()) not in sys.path
    sut = factory(Config(8, 4, 2, 16), lambda seq_id, out: 1)
    assert sut.capabilities.idle_schedule is False
    assert sut.snapshot() is None and "black box" in sut.missing


def test_a_folder_that_is_no_checkout_is_a_load_error(nv: Any, tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="not a nano-vllm checkout"):
        load_target(str(tmp_path), ADAPTER)
    with pytest.raises(LoadError, match="strict"):
        load_target(str(CHECKOUT), ADAPTER + "?strict=yes")


def test_one_request_runs_to_the_spec_outputs(factory: Any) -> None:
    w = make_workload(Config(num_blocks=8, block_size=4, max_num_seqs=2, max_num_batched_tokens=16),
                      [Request("a1", 6, 5)])
    observed = run_workload(w, factory, white_box=False)
    trace = expected_trace(w)
    assert observed["stop"] == "done" and observed["error"] is None
    assert [s["schedule"] for s in observed["steps"]] == [[list(p) for p in s.batch] for s in trace.steps]
    assert observed["outputs"] == {"a1": list(trace.outputs()["a1"])} == {"a1": [100, 101, 102, 103, 104]}
    assert differential(w, observed) == [] and hygiene(w, observed) == []


def test_a_prefill_chunk_samples_nothing_and_eos_ends_a_sequence(factory: Any) -> None:
    # budget 4, prompt 10: chunks of 4, 4, 2; one sample when the prefill catches up, then eos at output 2
    w = make_workload(Config(8, 4, 1, 4, eos=7), [Request("a1", 10, 6)], eos_at={"a1": [1]})
    observed = run_workload(w, factory, white_box=False)
    assert [s["schedule"] for s in observed["steps"]] == [[["a1", 4]], [["a1", 4]], [["a1", 2]], [["a1", 1]]]
    assert [s["sampled"] for s in observed["steps"]] == [[], [], [["a1", 0, 100]], [["a1", 1, 7]]]
    assert observed["outputs"] == {"a1": [100, 7]} and differential(w, observed) == []


def test_no_eos_means_no_token_ends_a_sequence(factory: Any) -> None:
    # nano-vllm's Config.eos defaults to -1; with eos None a sampled -1 must not finish the sequence
    sut = factory(Config(8, 4, 1, 8), lambda seq_id, out: -1)
    sut.add("a1", 3, 3)
    finished: list[str] = []
    for _ in range(3):
        sut.schedule()
        finished += sut.update()
    assert finished == ["a1"] and sut.outputs() == {"a1": [-1, -1, -1]}


def test_an_idle_step_never_reaches_nano_vllms_schedule(factory: Any) -> None:
    sut = factory(Config(8, 4, 1, 8), lambda seq_id, out: 7)
    assert sut.schedule() == {} and sut.update() == []  # nano-vllm itself asserts scheduled_seqs here
    w = make_workload(Config(8, 4, 2, 8), [Request("a1", 2, 1, 1), Request("a2", 2, 1, 4)])
    observed = run_workload(w, factory, white_box=False)
    assert observed["error"] is None and [s.get("idle", False) for s in observed["steps"]] == \
        [False, True, True, False]
    assert differential(w, observed) == []


def test_two_instances_with_different_block_sizes_keep_their_own(factory: Any) -> None:
    # LLMEngine sets Sequence.block_size for the whole process; the adapter sets it per sequence
    w = make_workload(Config(num_blocks=6, block_size=2, max_num_seqs=1, max_num_batched_tokens=8),
                      [Request("a1", 3, 4), Request("a2", 1, 2, 8)])
    assert instances(w, factory) == []


def test_strict_refuses_the_block_sizes_nano_vllms_config_refuses(nv: Any) -> None:
    strict = load_target(str(CHECKOUT), ADAPTER + "?strict=1")
    with pytest.raises(ValueError, match="multiple of 256"):
        strict(Config(8, 4, 1, 8), lambda seq_id, out: 1)
    observed = run_workload(make_workload(Config(2, 256, 1, 512), [Request("a1", 300, 2)]), strict, False)
    assert observed["error"] is None and observed["outputs"] == {"a1": [100, 101]}


# --- the findings are nano-vllm's --------------------------------------------------------------------------
# The adapter states nano-vllm's known differences and tells which one made a finding from nano-vllm's own state
# (conformance/engines/nanovllm.py, explain); the report's causes are those. Each difference's smallest case below
# is worked out from nano-vllm's code, independently of explain.

def R(seq_id: str, prompt_len: int, max_tokens: int) -> Request:
    return Request(seq_id, prompt_len, max_tokens)


SMALLEST = {
    # scheduler.py:42: step 1 admits a1 (1 token), then a2 needs 2 and 1 is left: only the first may chunk
    "only-first-chunks": (Config(2, 1, 2, 2), [R("a1", 1, 1), R("a2", 2, 1)], "differential", 1),
    # scheduler.py:54-55: step 2 prefills a2 while a1, running, waits (the card runs a1; a2 does not fit beside it)
    "prefill-first": (Config(2, 3, 2, 3), [R("a1", 3, 2), R("a2", 1, 1)], "differential", 2),
    # scheduler.py:57-73: step 2 decodes, a2 preempts itself, and the step admits nobody (the card readmits a2)
    "decode-admits-nothing": (Config(2, 2, 2, 3), [R("a1", 1, 2), R("a2", 2, 2)], "differential", 2),
    # scheduler.py:36-38: step 2, a2's 7 tokens need 3 blocks and 2 are free; the card admits a 1-token chunk
    "whole-prompt": (Config(3, 3, 2, 2), [R("a1", 2, 2), R("a2", 7, 1)], "differential", 2),
    # scheduler.py:30: step 2 admits a2 beside a1 with max_num_seqs 1; the card runs a1 alone
    "max-num-seqs-per-step": (Config(5, 2, 1, 1), [R("a1", 1, 3), R("a2", 7, 2)], "differential", 2),
    # scheduler.py:54-55 then 57-70: step 2 prefills a3 alone, step 3 decodes all three on a budget of 2
    "decode-not-charged": (Config(6, 1, 3, 2), [R("a1", 1, 5), R("a2", 1, 5), R("a3", 1, 5)], "invariants", 3),
    # block_manager.py:111-116: the decode of step 2 hashes a block that was never added at block size 1
    "block-size-1": (Config(4, 1, 1, 4), [R("a1", 2, 3)], "hygiene", 2),
}


@pytest.mark.parametrize("name", sorted(SMALLEST))
def test_each_difference_is_explained_on_its_smallest_case(nv: Any, factory: Any, name: str) -> None:
    config, requests, check, step = SMALLEST[name]
    w = make_workload(config, requests)
    f = first_finding(w, factory)
    assert f is not None
    if check == "invariants":  # the batch over the budget, as the black-box batch invariants report it
        batch = run_workload(w, factory, white_box=False)["steps"][step - 1]["schedule"]
        assert sum(n for _, n in batch) > config.max_num_batched_tokens
        f = Finding("invariants", "I2", step, "schedule", "over the budget", config.max_num_batched_tokens,
                    sum(n for _, n in batch))
    assert (f.check, f.step) == (check, step), f.message
    assert nv.explain(factory, w, f) == name
    assert name in {d.name for d in nv.DIFFERENCES}


def test_every_finding_on_the_corpus_is_one_of_nano_vllms_known_differences(nv: Any, factory: Any) -> None:
    causes = explained_corpus(nv.explain, factory)
    assert "None" not in causes, f"findings no known difference explains (the adapter's?): {causes['None'][:3]}"
    assert {"prefill-first", "only-first-chunks", "whole-prompt", "prefix-cache", "block-size-1",
            "decode-admits-nothing", "max-num-seqs-per-step"} <= set(causes)
    assert causes["only-first-chunks"][:2] == ["budget16", "example1"]
    assert causes["prefix-cache"][:2] == ["example2", "self_preemption"]


def test_check_quick_fails_on_nano_vllms_differences_and_none_of_the_adapters(nv: Any) -> None:
    from conformance.suite import run

    report = run(str(CHECKOUT), "quick", adapter=ADAPTER)
    assert report.verdict == "FAIL" and report.error is None
    status = {name: c.status for name, c in report.checks.items()}
    assert status["golden"] == status["differential"] == status["hygiene"] == "fail"
    assert status["equivalence"] == status["liveness"] == "pass"
    assert status["invariants"] == "fail" and not report.white_box  # a decode step over the budget, from outside
    assert by_check_rule(report, "invariants") == "I2"
    assert status["stateful"] in ("fail", "pass")  # never unknown: no idle schedule() reaches nano-vllm
    text = " ".join(cx.finding.message for cx in report.counterexamples) + " ".join(report.notes)
    for adapters_own in ("AssertionError", "adapter defect", "H.instances", "could not reproduce"):
        assert adapters_own not in text


def by_check_rule(report: Any, check: str) -> str:
    cx = report.checks[check].counterexample
    return str(cx.finding.rule) if cx is not None else ""


def test_the_reports_causes_are_nano_vllms_differences_and_name_no_bug_it_lacks(nv: Any) -> None:
    from conformance.suite import run

    report = run(str(CHECKOUT), "default", adapter=ADAPTER)
    named = difference_causes(report, nv.DIFFERENCES)
    assert {"whole-prompt", "max-num-seqs-per-step", "decode-not-charged", "prefill-first",
            "only-first-chunks", "prefix-cache", "block-size-1", "decode-admits-nothing"} == set(named)
    causes = report.diagnosis["causes"]
    by_check = {check: next(c["difference"]["name"] for c in causes if check in c["checks"])
                for check in ("liveness", "invariants", "hygiene", "golden")}
    assert by_check == {"liveness": "max-num-seqs-per-step", "invariants": "decode-not-charged",
                        "hygiene": "block-size-1", "golden": "only-first-chunks"}
