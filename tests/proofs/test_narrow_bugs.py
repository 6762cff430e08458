"""Bugs confined to one block size, one kind of step or one claim flag: `prove --quick` must see each.

A random stream of workloads can miss a bug that shows only at block_size 4, only when two sequences finish
in one step or only once three preemptions have happened; a flag no correct run raises agrees with the spec
however wrong it is. The validation's quotas (spec/bounded/quotas.py) and its steps from drawn states
(spec/bounded/offstates.py) are what catch these; the default tests run the validation on each bug, the slow
one the whole command on a copy of spec/ with the bug planted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import spec.rules
from spec import faults
from spec.bounded import cli, encode, modelcheck, offstates, transition, validate
from spec.faults import Edit
from spec.model import all_policies
from tests.proofs.encodings import compared_with, patched

ROOT = Path(__file__).resolve().parents[2]
CEIL = "    return -(-tokens // block_size)"
# edits of spec/rules.py: name -> (what it gets wrong, its edits)
SPEC_BUGS: dict[str, tuple[str, tuple[Edit, ...]]] = {
    "blocks_for_fast_path_floor": ("a block_size 4 fast path that rounds down", (
        Edit(CEIL, "    if block_size == 4:\n        return tokens >> 2\n" + CEIL),)),
    "blocks_for_fast_path_long": ("a block_size 4 fast path wrong only from 8 tokens on", (
        Edit(CEIL, "    if block_size == 4:\n"
                   "        return (tokens + 3) >> 2 if tokens < 8 else tokens >> 2\n" + CEIL),)),
    "self_preemption_counted_twice": ("num_preemptions + 2 for a self-preemption",
                                      faults.OBSERVABLE["self_preemption_counted_twice"].edits),
    "eos_finished_first": ("those finished on eos filed before those at max_tokens, in one step",
                           faults.OBSERVABLE["eos_finished_first"].edits),
    "admission_stops_after_3": ("no admission at all once three preemptions have happened", (
        Edit('    if preempted and state.config.policy.holds_after_preemption and state.waiting:',
             "    if state.num_preemptions >= 3:\n        return False, ()\n"
             '    if preempted and state.config.policy.holds_after_preemption and state.waiting:'),)),
}
# edits of spec/bounded/transition.py and encode.py: name -> (file, edits)
ENCODING_BUGS: dict[str, tuple[str, tuple[Edit, ...]]] = {
    "ceiling_default_branch": ("encode.py", (Edit("    out: Term = (t + b.block_size - 1) / b.block_size",
                                                  "    out: Term = (t + b.block_size) / b.block_size"),)),
    "fd_flag_shifted": ("transition.py", (Edit("                if attempt == 1:",
                                               "                if attempt == 2:"),)),
    "fa_flag_off_by_one": ("transition.py", (
        Edit("        self.budget_out.append(i < s.r)", "        self.budget_out.append(i < s.r - 1)"),)),
    "first_eos_off_by_one": ("transition.py", (
        Edit("            return s.drawn[slot] == self.first_eos[slot]",
             "            return s.drawn[slot] + 1 == self.first_eos[slot]"),)),
}


def with_encoding_bug(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make the validators build their runs from the encoding with bug `name`."""
    file, edits = ENCODING_BUGS[name]
    if file == "encode.py":
        monkeypatch.setattr(transition, "blocks_for", patched(encode, edits, name).blocks_for)
    else:
        monkeypatch.setattr(validate, "Run", patched(transition, edits, name).Run)


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(SPEC_BUGS))
def test_the_validation_sees_a_spec_bug_confined_to_one_kind_of_step(name):
    rules = faults.module_with(SPEC_BUGS[name][1], name)
    with compared_with(rules) as v:
        bad, _ = validate.validate(validate.QUICK_COUNT, rules=rules, validator=v)
    assert bad, f"{name} ({SPEC_BUGS[name][0]}) passes the validation of prove --quick"


@pytest.mark.long
def test_a_fast_path_at_block_size_4_passes_the_random_stream_alone():
    """Why the quotas are there: the stream's first workloads never compare a step where it matters."""
    with compared_with(faults.module_with(SPEC_BUGS["blocks_for_fast_path_long"][1], "long")) as v:
        assert all(v.compare(w) is None for w in validate.stream(validate.SEED, validate.QUICK_COUNT))


@pytest.mark.long
@pytest.mark.parametrize("name", ["ceiling_default_branch"])
def test_the_validation_sees_an_encoding_wrong_only_at_the_largest_block_size(name, monkeypatch):
    with_encoding_bug(monkeypatch, name)
    bad, _ = validate.validate(validate.QUICK_COUNT)
    assert bad and bad[0].workload.config.block_size == validate.STREAM.block_size, bad


@pytest.mark.long
def test_the_sampler_only_the_relational_out_reads_is_validated_in_the_quick_run(monkeypatch):
    """The relational OUT reads each slot's first eos draw (Run's `first_eos` branch), which no BMC row uses: the
    quick validation compares that branch with the spec too, and an off-by-one there fails the row."""
    with_encoding_bug(monkeypatch, "first_eos_off_by_one")
    assert validate.validate(validate.QUICK_COUNT)[0] == []  # the table of eos draws is right
    row = cli.validation_row(validate.QUICK_COUNT, solver=0)
    assert row["verdict"] == "disagree" and "(sampler: first eos)" in str(row["first_difference"]), row


@pytest.mark.long
@pytest.mark.parametrize("name", ["fd_flag_shifted", "fa_flag_off_by_one"])
def test_a_claim_flag_computed_wrong_differs_from_the_spec_on_drawn_states(name, monkeypatch):
    """No correct run raises FA's or FD's flag, so only steps from drawn states can tell a wrong one."""
    with_encoding_bug(monkeypatch, name)
    assert validate.validate(validate.QUICK_COUNT)[0] == []  # the stream cannot see it
    bad, _ = offstates.validate_states(validate.SEED)
    assert bad and bad[0].field.startswith("flags"), bad


@pytest.mark.parametrize("policy", all_policies(), ids=str)
def test_admission_stopped_after_three_preemptions_starves_the_queue_in_the_model_check(policy):
    rules = faults.module_with(SPEC_BUGS["admission_stops_after_3"][1], "stop_after_3")
    bounds = {k: v for k, v in cli.CROWD.items() if k != "reach"}
    report, _ = modelcheck.explore_all(**bounds, rules=rules, policy=policy)
    assert report.claim in ("AD", "LIVE", "deadlock"), report  # AD: the head held with a seat, budget and blocks


def prove_quick_with(tmp_path: Path, file: str, edits: tuple[Edit, ...], name: str) -> subprocess.CompletedProcess[str]:
    """`schedcheck prove --quick` on a copy of spec/ whose `file` (e.g. rules.py, bounded/encode.py) carries the
    edits."""
    shutil.copytree(ROOT / "spec", tmp_path / "spec", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "spec" / file
    target.write_text(faults.apply_edits(target.read_text(), edits, name))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    code = ("import argparse, sys; from spec.bounded import cli; p = argparse.ArgumentParser(); "
            "cli.add_arguments(p); sys.exit(cli.main(p.parse_args(['--quick'])))")
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900, check=False)


@pytest.mark.slow
@pytest.mark.parametrize("file, name", [("rules.py", "blocks_for_fast_path_long"),
                                        ("bounded/encode.py", "ceiling_default_branch"),
                                        ("bounded/transition.py", "fd_flag_shifted")])
def test_prove_quick_exits_nonzero_with_the_bug_planted(file, name, tmp_path):
    edits = SPEC_BUGS[name][1] if file == "rules.py" else ENCODING_BUGS[name][1]
    done = prove_quick_with(tmp_path, file, edits, name)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]


def test_the_spec_is_untouched():
    assert faults.RULES_PATH.read_text().count(CEIL) == 1 and spec.rules.blocks_for(4, 9) == 3
