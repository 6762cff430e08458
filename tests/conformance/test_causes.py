"""Root causes (conformance/checks/causes.py): every failing corpus vector and counterexample put down to the
fewest known bugs that explain its first divergence; what no known bug explains is grouped by what went wrong."""

import textwrap
from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.checks.causes import Item, local, stepwise
from conformance.checks.checkers import Finding
from conformance.checks.diagnosis import Evidence, mutant_factory, reproduce
from conformance.checks.workload import check_workload
from conformance.drivers import run_workload
from conformance.profiles import Profile
from conformance.suite import run
from conformance.workloads.corpus import load_corpus, run_corpus

MUTANTS = Path(__file__).resolve().parents[2] / "conformance" / "mutants"
TINY = Profile("tiny", None, 3, 2, 5)


def mutant(name):
    return str(MUTANTS / f"{name}.py")


def major(diagnosis):
    """The causes printed on a line of their own: a counterexample's, or more than a few vectors'."""
    return [c for c in diagnosis["causes"] if c["checks"] or len(c["sources"]) > 3]


def failing_vectors(target):
    vectors, _ = load_corpus()
    return len(run_corpus(vectors, load_target(target), True).lead)


@pytest.mark.long
@pytest.mark.parametrize("name", ["preempt_to_tail", "chunk_only_first", "decode_not_charged"])
def test_one_catalog_bug_is_one_cause_holding_every_failing_vector(name):
    d = run(mutant(name), TINY).diagnosis
    assert [c["bugs"] for c in major(d)] == [[name]], d["lines"]
    assert major(d)[0]["vectors"] == failing_vectors(mutant(name)), d["lines"]  # none left out, none twice


@pytest.mark.long
def test_two_bugs_at_once_are_two_causes_each_with_its_own_vectors(tmp_path):
    p = tmp_path / "two_bugs.py"  # the counterexamples may all show one of them: the corpus shows both
    p.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(MUTANTS)!r})
        from eos_before_append import Scheduler as EosFirst
        from preempt_to_tail import Scheduler as ToTail, Sequence, SequenceStatus

        class Scheduler(ToTail, EosFirst):
            pass
        """))
    d = run(str(p), TINY).diagnosis
    named = {c["bugs"][0]: c for c in d["causes"] if len(c["bugs"]) == 1}
    assert {"eos_before_append", "preempt_to_tail"} <= set(named), d["lines"]
    assert named["eos_before_append"]["vectors"] > 0 and named["preempt_to_tail"]["vectors"] > 0
    assert sum(c["vectors"] for c in d["causes"]) == failing_vectors(str(p))
    explained = sum(named[n]["vectors"] for n in ("eos_before_append", "preempt_to_tail"))
    assert explained >= 0.9 * failing_vectors(str(p)), d["lines"]


def test_what_no_known_bug_explains_is_grouped_by_what_went_wrong_with_the_features_all_share(tmp_path):
    p = tmp_path / "crash_at_block_size_1.py"
    p.write_text(textwrap.dedent("""
        from impl.scheduler import Scheduler as Base, Sequence, SequenceStatus

        class Scheduler(Base):
            def update(self):
                if self.block_size == 1 and any(s.output for s in self.running):
                    raise IndexError("list index out of range")
                return super().update()
        """))
    report = run(str(p), TINY)
    d = report.diagnosis
    crash = [c for c in d["causes"] if c["what"] == "update raises IndexError [H.raised]"]
    assert len(crash) == 1 and crash[0]["bugs"] == [], d["lines"]
    assert "block-size-1" in crash[0]["common"] and "hygiene" in crash[0]["checks"]
    assert crash[0]["vectors"] == report.checks["hygiene"].failed  # every vector it crashes on, and nothing else
    assert any("no known bug: update raises IndexError [H.raised]" in line and "every one with" in line
               for line in d["lines"])


@pytest.mark.long
def test_every_failing_feature_is_touched_by_some_cause():
    report = run(mutant("preempt_keeps_num_computed"), TINY)
    failing = {t for t, row in report.features.items() if row["fail"]}
    touched = {t for c in report.diagnosis["causes"] for t in c["features"]}
    assert failing and failing <= touched


def finding(expected, actual, rule="P2", call="schedule", message=""):
    return Finding("differential", rule, 3, call, message, expected, actual)


def test_the_first_differing_entry_is_what_a_suspect_must_reproduce():
    spec = [["a1", 1], ["a2", 2]]
    assert local(finding(spec, [["a1", 1], ["a3", 5]]))[-2:] == ("['a2', 2]", "'a3'")  # which sequence, not its n
    assert local(finding(spec, [["a1", 1], ["a3", 5]])) == local(finding(spec, [["a1", 1], ["a3", 1], ["a2", 1]]))
    assert local(finding(spec, [["a1", 1], ["a2", 1]]))[-2:] == ("['a2', 2]", "['a2', 1]")  # its n
    assert local(finding(spec, [["a1", 1]]))[-2:] == ("['a2', 2]", "<missing>")
    assert local(finding(spec, [["a1", 1]])) != local(finding(spec, [["a1", 1], ["a2", 1]]))
    raised = Finding("hygiene", "H.raised", 2, "update", "step 2: update IndexError: list index out of range")
    assert local(raised)[-1] == "IndexError"


def test_judging_a_suspect_step_by_step_is_the_full_run_cut_at_the_step():
    vectors, _ = load_corpus(families=("counterexamples", "coverage"))
    lead = run_corpus(vectors, load_target(mutant("victim_first")), False).lead
    by_id = {v.vector_id: v.workload for v in vectors}
    items = [Item(f"corpus/{i}", by_id[i], f) for i, f in sorted(lead.items())][:40]
    assert len(items) >= 10

    def rerun(factory, item):
        return reproduce(factory, Evidence(item.check, item.workload, item.finding, item.source), False)
    compared = 0
    for name in ("preempt_to_tail", "victim_first", "phase2_continue"):
        suspect = mutant_factory(name)
        for item in items:
            whole = check_workload(item.workload, suspect, False, only=(item.check,))[item.check]
            cut = stepwise(suspect, item, False, rerun)
            assert local(cut) == (local(whole) if whole is not None and whole.step <= item.finding.step else None)
            compared += whole is not None
    assert compared >= 10


def test_a_run_cut_at_a_step_stops_there():
    w = next(v.workload for v in load_corpus(families=("coverage",))[0] if len(v.workload.requests) > 2)
    whole, cut = run_workload(w, load_target("impl"), False), run_workload(w, load_target("impl"), False, until=2)
    assert cut["stop"] == "until" and cut["steps"] == whole["steps"][:2] and len(whole["steps"]) > 2


@pytest.mark.long
def test_two_bugs_that_show_in_one_step_are_named_together_not_as_a_third(tmp_path):
    from conformance.mutants.build import source
    from spec import faults

    p = tmp_path / "p07_scheduler.py"  # both in schedule(): no subclassing composes them, their edits do
    p.write_text(faults.apply_edits(source("decode_not_charged"), faults.BY_NAME["phase2_continue"].edits, "test"))
    d = run(str(p), TINY).diagnosis
    names = [c["bugs"] for c in major(d)]
    assert ["decode_not_charged"] in names and ["phase2_continue"] in names, d["lines"]
    assert ["phase2_continue + decode_not_charged"] in names, d["lines"]
    assert all(b in ("decode_not_charged", "phase2_continue", "phase2_continue + decode_not_charged")
               for c in names for b in c), d["lines"]  # no third bug for what the two do together


def test_a_pair_whose_edits_touch_the_same_text_is_not_made():
    from conformance.checks.pairs import pair_factory

    assert pair_factory("preempt_keeps_num_computed + preempt_clears_output") is None  # both rewrite the requeue
    both = pair_factory("phase2_continue + decode_not_charged")
    assert both is not None and run_workload(load_corpus()[0][0].workload, both, False)["error"] is None


def test_a_batch_over_the_budget_is_named_as_such():
    f = Finding("invariants", "I2", 3, "schedule", "step 3: schedule() returned 5 tokens, more than ...", 4, 5)
    from conformance.checks.causes import change

    assert change(f) == "schedule() returns more tokens than max_num_batched_tokens"


def test_the_fewest_suspects_cover_every_finding_once_and_a_cause_names_only_those_that_fit_all(monkeypatch):
    from conformance.checks import causes
    from spec.model import Config
    from spec.trace import Request, make_workload

    w = make_workload(Config(8, 2, 2, 8), [Request("a1", 2, 1)])
    mine = [Finding("differential", "P2", 1, "schedule", f"m{i}", [["a1", 2]], [["a1", i + 3]]) for i in range(6)]
    items = [Item(f"corpus/v{i}", w, f) for i, f in enumerate(mine)]
    fits = {"victim_first": {0, 1}, "preempt_to_tail": {1, 2, 3, 4}, "phase2_continue": {2, 3, 4}}

    def stepwise(factory, item, white_box, rerun):  # a suspect "reproduces" the items the table gives it
        return item.finding if items.index(item) in fits.get(factory, ()) else None
    monkeypatch.setattr(causes, "stepwise", stepwise)
    got = causes.root_causes(items, False, None, lambda name: name)
    held = {c.bugs or (c.what,): [items.index(i) for i in c.items] for c in got}
    assert held == {("preempt_to_tail",): [1, 2, 3, 4], ("victim_first",): [0], ("schedule() gives more tokens "
                    "than the spec [P2]",): [5]}, held  # each item once; the smaller cause only keeps what is left
    tail = next(c for c in got if c.bugs == ("preempt_to_tail",))
    assert dict(tail.also) == {"phase2_continue": 3, "victim_first": 1}  # fits some, not all: not a tie


@pytest.mark.long
@pytest.mark.parametrize("name", ["preempt_keeps_blocks_used", "finish_keeps_blocks"])
def test_a_failing_vectors_lead_is_its_earliest_finding_of_any_check(name):
    vectors, _ = load_corpus(families=("counterexamples", "coverage", "exhaustive"))
    factory = load_target(mutant(name))
    lead = run_corpus(vectors, factory, True).lead
    earlier = 0
    for v in vectors:
        if v.vector_id not in lead:
            continue
        found = [f for f in check_workload(v.workload, factory, True).values() if f is not None]
        assert lead[v.vector_id].step == min(f.step for f in found), v.vector_id
        earlier += found[0].step > lead[v.vector_id].step  # the first check's finding is not the earliest
    assert earlier > 0  # the corpus has vectors where taking the first check's finding would be wrong


def test_a_cause_no_bug_explains_keeps_no_name_when_the_diagnosis_has_one():
    from conformance.checks.diagnosis import diagnose
    from conformance.workloads.corpus import CORPUS_DIR
    from spec.trace import load_workload

    w = load_workload(CORPUS_DIR / "counterexamples" / "preempt_to_tail.differential.json")
    factory = load_target(mutant("preempt_to_tail"))
    ev = Evidence("differential", w, reproduce(factory, Evidence("differential", w, None)))
    crash = Finding("hygiene", "H.raised", 1, "update", "step 1: update IndexError: list index out of range")
    d = diagnose([ev], factory, reproduce, corpus=[("corpus/x", w, crash)])
    assert d.kept == ("preempt_to_tail",)
    alone = [c for c in d.causes if c.what]
    assert [c.bugs for c in alone] == [()] and alone[0].line().startswith("no known bug: update raises IndexError")


def test_the_kind_of_exception_is_read_from_every_message_form():
    """A golden finding names its case first ("budget16: step 2 update raised WireError: ..."); the cause once
    read "update raises budget16"."""
    from conformance.checks.causes import raised_kind
    from conformance.checks.checkers import Finding
    plain = Finding("hygiene", "H.raised", 2, "update", "step 2: update IndexError: list index out of range")
    golden = Finding("golden", "H.raised", 2, "update", "budget16: step 2 update raised WireError: Error: no instance")
    assert raised_kind(plain) == "IndexError" and raised_kind(golden) == "WireError"
