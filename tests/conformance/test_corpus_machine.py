"""The frozen corpus is versioned, readable and covers the card's edge cases; the state machine is deterministic."""

import json

from conformance.adapters import SpecAdapter, load_target
from conformance.checks.machine import run_machine
from conformance.workloads.corpus import CORPUS_DIR, MANIFEST, features, load_corpus
from conformance.workloads.corpus_build import select
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
    for family in ("exhaustive", "edge", "counterexamples"):
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
