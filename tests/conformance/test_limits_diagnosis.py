"""A hang leaves its own findings out of the diagnosis, not the diagnosis of the rest; notes name what hung and
never suggest what is already in force."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance import drivers, suite
from conformance.checks import machine
from conformance.profiles import Profile
from spec.golden import golden_cases

MUTANTS = Path(__file__).resolve().parents[2] / "conformance" / "mutants"
TINY = Profile("tiny", None, 3, 2, 5)
# Vectors of the counterexamples family, each the only workload of the run with its config (num_blocks,
# block_size, max_num_seqs, max_num_batched_tokens), all after the eos_before_append vectors in the corpus's order.
HANGS_ON = {"grow_on_mod_one.differential": (6, 2, 2, 7), "max_tokens_off_by_one.invariants": (2, 2, 2, 4),
            "preempt_to_tail.stateful": (6, 1, 2, 3)}


def eos_bug_that_hangs_on(tmp_path: Path, vectors: list[str]) -> Path:
    """The catalog's eos_before_append mutant, with schedule() spinning on the configs of `vectors` alone."""
    path = tmp_path / "p07_scheduler.py"
    path.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(MUTANTS)!r})
        from eos_before_append import Scheduler as Base, Sequence, SequenceStatus

        class Scheduler(Base):
            def schedule(self):
                while (self.num_blocks, self.block_size, self.max_num_seqs, self.max_num_batched_tokens) in \\
                        {[HANGS_ON[v] for v in vectors]!r}:
                    pass
                return super().schedule()
        """))
    return path


@pytest.mark.long
@pytest.mark.parametrize("vectors", [["grow_on_mod_one.differential"], sorted(HANGS_ON)])
def test_a_hang_leaves_the_other_findings_diagnosed(tmp_path, monkeypatch, vectors):
    """Before: with one vector hanging, the diagnosis said "no known bug matches all findings" (no mutant
    reproduces a hang); with three, exploring stopped early and the note said "diagnosis skipped: ... a
    submission that hangs; fix the hang first", naming neither the vectors nor a way around them."""
    monkeypatch.setattr(drivers, "RUN_SECONDS", 0.3)
    monkeypatch.setattr(machine, "RUN_SECONDS", 0.3)
    report = suite.run(str(eos_bug_that_hangs_on(tmp_path, vectors)), TINY, families=("counterexamples",))
    assert any(cx.finding.rule == "H.timeout" for cx in report.counterexamples)
    assert report.diagnosis is not None and report.diagnosis["matches"] == ["eos_before_append"], report.notes
    [note] = [n for n in report.notes if n.startswith("diagnosis")]
    named = ", ".join(f"corpus/counterexamples/{v}" for v in vectors)
    assert note.startswith(f"diagnosis: left out the findings on {named}: their runs hung"), note
    assert "--exclude-family counterexamples" in note and "schedcheck replay TRACE PATH" in note
    assert f"conformance/workloads/data/counterexamples/{vectors[0]}.json" in note


@pytest.mark.parametrize("profile", ["quick", "default", "thorough"])
def test_an_unreproduced_machine_failure_never_suggests_the_profile_in_force(monkeypatch, profile):
    """Before: "run with --profile default to look further" on a run under --profile default (and thorough)."""
    monkeypatch.setattr(suite, "run_stage", lambda r, stage, tick: None)  # only the machine stages run
    monkeypatch.setattr(suite, "run_token_values", lambda r: None)
    monkeypatch.setattr(suite, "run_machine", lambda *args: golden_cases()[0].workload)  # a "failing" run
    monkeypatch.setattr(suite, "stateful_finding", lambda factory, white_box: lambda w: None)
    report = suite.run("impl", profile, families=())
    [note] = [n for n in report.notes if n.startswith("stateful:")]
    assert report.checks["stateful"].status == "unknown"
    assert f"--profile {profile}" not in note
    larger = {"quick": "default", "default": "thorough"}.get(profile)
    assert (f"--profile {larger}" in note) if larger else ("--profile" not in note), note
