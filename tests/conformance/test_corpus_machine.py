"""The frozen corpus is versioned, readable and covers the card's edge cases; the state machine is deterministic."""

import json

import pytest

from conformance.adapters import SpecAdapter, load_target
from conformance.checks.checkers import expected_trace
from conformance.checks.machine import run_machine
from conformance.workloads import scale
from conformance.workloads.corpus import (
    CORPUS_DIR,
    MANIFEST,
    families_except,
    family_arg,
    family_names,
    features,
    load_corpus,
)
from conformance.workloads.corpus_build import SCALE, build, select
from spec.feasible import feasible
from spec.golden import case_named
from spec.trace import RULES_VERSION

EDGE_FEATURES = {"block-size-1", "budget-below-max-num-seqs", "chunk-on-block-boundary", "chunked-prefill",
                 "double-preemption", "eos-first-token", "eos-token-0", "arrivals", "kv-one-peak",
                 "max-num-seqs-running", "readmit-same-step", "repeat-preemption", "self-preemption",
                 "head-of-line", "preemption"}


def test_corpus_loads_without_notes_and_matches_its_manifest():
    vectors, notes = load_corpus()
    assert notes == []
    manifest = json.loads((CORPUS_DIR / MANIFEST).read_text())
    assert manifest["rules"] == RULES_VERSION
    assert manifest["corpus"] == 3
    for family in ("exhaustive", "edge", "counterexamples", *(f"scale-{f}" for f in SCALE)):
        assert manifest["families"][family]["vectors"] == sum(v.family == family for v in vectors)
    raw = json.loads(next(CORPUS_DIR.glob("exhaustive/*.json")).read_text())
    assert raw["rules"] == RULES_VERSION and raw["tags"]


def test_corpus_covers_every_edge_case_of_the_card():
    vectors, _ = load_corpus()
    covered = {tag for v in vectors for tag in v.workload.tags}
    assert covered >= EDGE_FEATURES


def test_features_come_from_the_spec_run():
    assert "self-preemption" in features(case_named("self_preemption").workload)
    assert "head-of-line" in features(case_named("example3").workload)
    assert "preemption" not in features(case_named("example1").workload)


def test_selection_keeps_one_workload_per_behaviour():
    vectors, _ = load_corpus(families=["exhaustive"])
    ws = [v.workload for v in vectors[:40]]
    assert list(select(ws + ws, set())) == list(select(ws, set()))


def test_state_machine_passes_the_spec_and_finds_a_mutant_deterministically():
    assert run_machine(SpecAdapter, 10, 15) is None
    mutant = load_target("conformance/mutants/sample_during_prefill.py")
    first = run_machine(mutant, 30, 15)
    assert first is not None and first == run_machine(mutant, 30, 15)


# --- scale families ------------------------------------------------------------------------------

def scale_problems(family, vectors):
    """Why a frozen scale family misses its targets (empty: it reaches them)."""
    want, tags = SCALE[family]
    problems = [] if len(vectors) == want else [f"{family}: {len(vectors)} vectors, expected {want}"]
    for v in vectors:
        w = v.workload
        missing = set(tags) - set(v.workload.tags)
        if missing:
            problems.append(f"{v.vector_id}: lacks {sorted(missing)}")
        if not feasible(w.config, w.requests):
            problems.append(f"{v.vector_id}: a request does not fit the cache alone")
    return problems


def scale_vectors(family):
    return load_corpus(families=[f"scale-{family}"])[0]


@pytest.mark.parametrize("family", sorted(SCALE))
def test_scale_family_reaches_its_targets(family):
    assert scale_problems(family, scale_vectors(family)) == []


def test_a_family_below_its_target_size_fails_the_check():
    small = load_corpus(families=["exhaustive"])[0][:3]
    problems = scale_problems("thrash", small)
    assert any("expected" in p for p in problems) and any("lacks ['thrash']" in p for p in problems)


def test_scale_families_reach_far_outside_the_small_scopes():
    ws = [v.workload for f in SCALE for v in scale_vectors(f)]
    assert max(w.config.block_size for w in ws) >= 1000
    assert max(r.prompt_len for w in ws for r in w.requests) > 2**53
    assert max(w.config.max_num_batched_tokens for w in ws) > 2**53
    eos = [w.config.eos for w in ws if w.config.eos is not None]
    assert min(eos) < -(2**20) and max(eos) > 2**60
    assert max(len(w.requests) for w in ws) >= 100
    assert {1, 2} <= {w.config.max_num_seqs for w in ws if len(w.requests) >= 20}
    trace_lengths = [len(expected_trace(v.workload).steps) for v in scale_vectors("long-run")]
    assert min(trace_lengths) >= 300
    thrash = [expected_trace(v.workload) for v in scale_vectors("thrash")]
    assert max(t.final.num_preemptions for t in thrash) >= 10


def test_scale_workloads_are_deterministic_and_tagged_with_their_family():
    for family in scale.FAMILIES:
        w = scale.build(family, 7)
        assert w == scale.build(family, 7) and w.tags == (family,)
    with pytest.raises(ValueError, match="unknown"):
        scale.build("huge", 1)


def test_frozen_scale_families_are_what_the_builder_writes(tmp_path):
    for family in SCALE:
        (tmp_path / f"scale-{family}").mkdir()
    build(tmp_path, families=[f"scale-{f}" for f in SCALE])
    for family in SCALE:
        for path in (CORPUS_DIR / f"scale-{family}").glob("*.json"):
            assert (tmp_path / f"scale-{family}" / path.name).read_bytes() == path.read_bytes(), path


def test_scale_features_are_absent_from_the_small_scope_families():
    vectors, _ = load_corpus(families=["exhaustive", "edge", "coverage"])
    scale_tags = {"large-numbers", "past-2^53", "crowd", "long-waiting-queue", "burst", "long-run", "thrash"}
    assert not {t for v in vectors for t in v.workload.tags} & scale_tags


def test_exclude_family_option_names_the_known_families():
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="'nope' does not exist; choose one of counterexamples"):
        family_arg("nope")
    assert family_arg("counterexamples") == "counterexamples"
    assert families_except([]) is None
    kept = families_except(["counterexamples"])
    assert "counterexamples" not in kept and set(kept) | {"counterexamples"} == set(family_names())


def test_a_failing_machine_run_always_has_a_request_so_check_can_replay_it(tmp_path):
    """The machine called schedule() in runs that never added a request. A scheduler naming an unknown id in every
    batch failed there first: a run that is no workload, which the workload driver cannot replay, so `check` left
    stateful UNKNOWN while `grade` (which judges the machine's runs with a request) failed it."""
    from pathlib import Path

    from conformance.sources import stateful_finding

    root = Path(__file__).resolve().parents[2]
    path = tmp_path / "ghost.py"
    path.write_text((root / "impl" / "scheduler.py").read_text() + "\n\n"
                    + (root / "tests" / "grading" / "hostile" / "unknown_id.py").read_text())
    factory = load_target(str(path))
    found = run_machine(factory, 15, 10)
    assert found is not None and found.requests, found
    finding = stateful_finding(factory, True)(found)
    assert finding is not None and finding.rule == "P1", finding


@pytest.mark.long
def test_check_judges_the_machine_runs_whole_as_grade_does(tmp_path):
    """A scheduler that loses tokens from one step to the next (its outputs re-wrapped in a list whose iterator
    lies) passes the machine's lockstep comparison, which sees each state alone; grade judges each machine run of
    the default profile as a case by the workload checks, within the steps the machine took, and failed stateful;
    check passed it. check now judges the runs by the same rule (conformance/checks/machine_run.py)."""
    from pathlib import Path

    from conformance.suite import run

    root = Path(__file__).resolve().parents[2]
    path = tmp_path / "replace_lists.py"
    path.write_text((root / "impl" / "scheduler.py").read_text() + "\n\n"
                    + (root / "tests" / "grading" / "hostile" / "replace_lists.py").read_text())
    report = run(str(path), "default", diagnose=False)  # the machine stages grade's cases are drawn from
    found = report.checks["stateful"].counterexample
    assert report.checks["stateful"].status == "fail" and found is not None, report.checks["stateful"].status
    assert found.workload.requests and found.finding.check == "stateful"
