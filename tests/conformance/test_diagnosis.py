"""Differential diagnosis: the catalog bugs consistent with ALL findings, told apart by a searched workload
when several fit, "no known bug matches" when none does, findings grouped by cause; grading uses the same."""

import textwrap
from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.checks.diagnosis import Evidence, diagnose, reproduce, tell_apart
from conformance.drivers import run_workload
from conformance.grading.diagnose import diagnose as grading_diagnose
from conformance.profiles import Profile
from conformance.suite import run
from conformance.workloads.corpus import CORPUS_DIR
from spec.golden import case_named
from spec.model import Config
from spec.trace import Request, load_workload, make_workload

MUTANTS = Path(__file__).resolve().parents[2] / "conformance" / "mutants"
TINY = Profile("tiny", None, 3, 2, 5)
CORPUS = ("counterexamples",)


def mutant(name):
    return str(MUTANTS / f"{name}.py")


@pytest.mark.parametrize("name", ["preempt_to_tail", "eos_before_append", "batch_not_copied"])
def test_a_catalog_mutant_is_diagnosed_as_itself_alone(name):
    report = run(mutant(name), TINY, families=CORPUS)
    d = report.diagnosis
    assert d["matches"] == [name], d["lines"]
    assert d["lines"][0].startswith(f"diagnosis: behaves like {name}:")
    assert [c["bugs"] for c in d["causes"]] == [[name]]  # one cause, one line


def test_several_candidates_are_told_apart_by_a_searched_workload():
    w = case_named("self_preemption").workload
    candidates = ("preempt_to_tail", "preempt_clears_output", "victim_first")
    kept, separations, searched = tell_apart(candidates, load_target(mutant("victim_first")),
                                             iter([("golden/self_preemption", w)] + [("example2", case_named(
                                                 "example2").workload)]))
    assert kept == ("victim_first",) and separations and searched >= 1
    assert separations[-1]["kept"] == ["victim_first"]


def test_consistency_needs_every_finding_and_never_falls_back_to_the_nearest(tmp_path):
    p = tmp_path / "two_bugs.py"  # two catalog bugs at once: no single mutant reproduces both findings
    p.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(MUTANTS)!r})
        from eos_before_append import Scheduler as EosFirst
        from preempt_to_tail import Scheduler as ToTail, Sequence, SequenceStatus

        class Scheduler(ToTail, EosFirst):
            pass
        """))
    factory = load_target(str(p))
    evidence = []
    for name in ("eos_before_append", "preempt_to_tail"):  # each bug's pinned counterexample shows one of them
        w = load_workload(CORPUS_DIR / "counterexamples" / f"{name}.differential.json")
        evidence.append(Evidence("differential", w, reproduce(factory, Evidence("differential", w, None))))
    d = diagnose(evidence, factory, reproduce)
    assert d.kept == () and d.lines()[0] == "diagnosis: no known bug matches all findings"
    assert [c.bugs for c in d.causes] == [("eos_before_append",), ("preempt_to_tail",)]
    assert d.lines()[-2].startswith("  1. eos_before_append: differential [U.finish] (1 check")


def test_a_fault_outside_the_catalog_matches_nothing(tmp_path):
    p = tmp_path / "reuses.py"
    p.write_text("from impl.scheduler import Scheduler as Base, Sequence, SequenceStatus\n\n"
                 "class Scheduler(Base):\n"
                 "    def update(self):\n"
                 "        self.mine = getattr(self, 'mine', [])\n"
                 "        self.mine[:] = super().update()\n"
                 "        return self.mine\n")
    w = case_named("example1").workload
    f = reproduce(load_target(str(p)), Evidence("hygiene", w, None))
    d = diagnose([Evidence("hygiene", w, f)], load_target(str(p)), reproduce)
    assert d.kept == () and d.lines()[0] == "diagnosis: no known bug matches all findings"
    assert d.causes[0].line().startswith("no known bug: update() fails H.retained: hygiene [H.retained] (1 check")


def test_grading_diagnosis_uses_the_same_consistency():
    factory = load_target(mutant("phase2_continue"))
    failing = [(w, run_workload(w, factory, white_box=False))
               for w in (case_named("example3").workload, case_named("self_preemption").workload)]
    failing = [(w, obs) for w, obs in failing if obs["steps"]]
    names = [d.split(":")[0] for d in grading_diagnose(failing)]
    assert names == ["phase2_continue"]
    impl = load_target("impl")
    assert grading_diagnose([(w, run_workload(w, impl, white_box=False)) for w, _ in failing]) == ()


LATE_FREE = (  # impl, with the blocks of a finished sequence given back at the next schedule(), not in update()
    ("                self.blocks_used -= freed\n", "                self._owed = freed\n"),
    ("        running = self.running\n        budget = self.max_num_batched_tokens\n",
     "        self.blocks_used -= getattr(self, '_owed', 0)\n        self._owed = 0\n"
     "        running = self.running\n        budget = self.max_num_batched_tokens\n"),
)


def late_free(tmp_path: Path):
    text = (Path(__file__).resolve().parents[2] / "impl" / "scheduler.py").read_text()
    for old, new in LATE_FREE:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / "p07_scheduler.py"
    path.write_text(text)
    return load_target(str(path))


def test_a_bug_that_only_starts_like_the_submission_is_not_named(tmp_path):
    """The blocks come back one call late: the first divergence (I1 after update()) is finish_keeps_blocks's,
    but the blocks do come back, which that bug never does; its hint ("on finish, blocks_used -= ...") would
    name code the submission has. So it is not the diagnosis, and the cause says only that it goes wrong alike."""
    submission = late_free(tmp_path)
    w = make_workload(Config(3, 1, 2, 4, 0), [Request("a", 1, 1), Request("b", 1, 3, 2)])
    found = reproduce(submission, Evidence("invariants", w, None))  # type: ignore[arg-type]
    assert found is not None and found.rule == "I1"
    d = diagnose([Evidence("invariants", w, found)], submission, reproduce)
    assert "finish_keeps_blocks" in d.consistent and d.kept == () and d.unlike == ("finish_keeps_blocks",)
    assert "goes on differently" in d.lines()[0]
    assert all("finish_keeps_blocks" not in c.bugs for c in d.causes)
    assert any(name == "finish_keeps_blocks" for c in d.causes for name, _ in c.near)
    # the bug itself, as the submission, is still named: its whole run is its own
    itself = load_target(mutant("finish_keeps_blocks"))
    d = diagnose([Evidence("invariants", w, reproduce(itself, Evidence("invariants", w, None)))],  # type: ignore
                 itself, reproduce)
    assert d.kept == ("finish_keeps_blocks",) and d.lines()[0].startswith("diagnosis: behaves like")


def test_grading_names_no_bug_whose_whole_run_differs(tmp_path):
    """update() reports each finished sequence one call late: black box, its first divergence is
    max_tokens_off_by_one's (a1 missing from update()'s list), but a1 never runs again, as that bug would make it.
    Grading once fell back to the first-divergence match when no whole run matched, and showed its hint."""
    text = (Path(__file__).resolve().parents[2] / "impl" / "scheduler.py").read_text()
    old = "                self.blocks_used -= freed\n        return done\n"
    assert text.count(old) == 1
    path = tmp_path / "p07_scheduler.py"
    late = "                self.blocks_used -= freed\n        late, self._late = getattr(self, '_late', []), done\n"
    path.write_text(text.replace(old, late + "        return late\n"))
    w = make_workload(Config(4, 1, 2, 4, 0), [Request("a1", 1, 2), Request("a2", 2, 3)])
    observed = run_workload(w, load_target(str(path)), white_box=False)
    itself = run_workload(w, load_target(mutant("max_tokens_off_by_one")), white_box=False)
    assert grading_diagnose([(w, itself)])[0].startswith("max_tokens_off_by_one")  # the bug itself is named
    assert grading_diagnose([(w, observed)]) == ()
