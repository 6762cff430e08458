"""Every claim can fail: `prove --quick`'s vacuity row fails when a claim's formula or its statement is weakened.

BMC proves a claim's formula; a formula weakened by mistake (a comparison loosened, a conjunct dropped, a slot
skipped) still reads "proved". The row `claims can fail` (spec/bounded/vacuity.py) judges each formula on the
broken steps of the faults and on changed steps of correct runs, against the claim's statement in
spec/invariants.py and spec/bounded/execute.py. Each bug below is planted in the text of the real module, which
is loaded fresh and put where the row reads it; the row must disagree. The default tests plant three (one per
side, one seen only on changed steps); `-m long` plants them all.
"""

from __future__ import annotations

import types
from dataclasses import replace

import pytest

import spec.invariants
import spec.rules
from spec import faults
from spec.bounded import checks, claims, execute, vacuity
from spec.faults import Edit
from spec.model import Config, Status
from spec.trace import Request, make_workload
from tests.proofs.encodings import patched

# (module, anchor, replacement, where the row sees it: a fault's name or "spec.rules" for changed steps)
PLANTS: dict[str, tuple[types.ModuleType, str, str, str]] = {
    "NP != made <": (claims, "mid.preemptions - pre.preemptions != victims",
                     "mid.preemptions - pre.preemptions < victims", "self_preemption_counted_twice"),
    "NP without update()'s half": (
        claims, "return z3.Or(mid.preemptions - pre.preemptions != victims, post.preemptions != mid.preemptions)",
        "return mid.preemptions - pre.preemptions != victims", "spec.rules"),
    "I1 without blocks_used <= num_blocks": (
        claims, "return z3.And(s.used == held, s.used <= run.x.num_blocks, *per)",
        "return z3.And(s.used == held, *per)", "spec.rules"),
    "I6 skips slot 0": (claims, "out.append(z3.Implies(st == RUNNING, occurrences(s, j, 0, s.r) == 1))",
                        "out.append(z3.Implies(z3.And(st == RUNNING, j > 0), occurrences(s, j, 0, s.r) == 1))",
                        "spec.rules"),
    "I2 lets a sequence in twice": (claims, "after.times[j] == 1, after.sched[j] >= 1",
                                    "after.times[j] >= 1, after.sched[j] >= 1", "spec.rules"),
    "I3 lets waiting keep a token": (claims, "z3.Implies(s.status[j] == WAITING, s.computed[j] == 0)",
                                     "z3.Implies(s.status[j] == WAITING, s.computed[j] <= 1)", "spec.rules"),
    "I4 lets one token go": (claims, "out.append(after.out[j] >= before.out[j])",
                             "out.append(after.out[j] + 1 >= before.out[j])", "spec.rules"),
    "FC with >=": (claims, "s.computed[j] + s.sched[j] == run.x.prompt_len[j] + s.out[j] - 1))",
                   "s.computed[j] + s.sched[j] >= run.x.prompt_len[j] + s.out[j] - 1))", "spec.rules"),
    "LIVE's ranking need not drop": (claims, "potential(run, after) > potential(run, before) - 1))",
                                     "potential(run, after) > potential(run, before)))", "spec.rules"),
    "FB after update() only": (checks, "return z3.Or(run.mid[k].r > run.x.budget, run.post[k].r > run.x.budget)",
                               "return run.post[k].r > run.x.budget", "spec.rules"),
    "OUT compares lengths only": (checks, "z3.Or(t.out[j] != a.out[j], t.drawn[j] != a.drawn[j])",
                                  "t.out[j] != a.out[j]", "preempt_clears_output"),
    "the statement of I1 allows one block too many": (
        spec.invariants, "    if s.blocks_used > s.config.num_blocks:",
        "    if s.blocks_used > s.config.num_blocks + 1:", "spec.rules"),
    "the statement of I3 lets waiting keep a token": (spec.invariants, "        if q.num_computed != 0:",
                                                      "        if q.num_computed > 1:", "spec.rules"),
    "the statement of NP with <": (execute, "    if grew != reset:", "    if grew < reset:",
                                   "self_preemption_counted_twice"),
    "CH lets a chunk fall short": (claims, "mid.times[j] > 0, mid.sched[j] != want))",
                                   "mid.times[j] > 0, mid.sched[j] > want))", "spec.rules"),
    "FR finishes one token late": (claims, "z3.Or(run.eos_next(mid, j), post.out[j] >= x.max_tokens[j])",
                                   "z3.Or(run.eos_next(mid, j), post.out[j] > x.max_tokens[j])", "spec.rules"),
    "AD without the seats' gate": (claims, "held = [left <= 0, mid.r >= x.max_num_seqs, ",
                                   "held = [left <= 0, ", "spec.rules"),
    "the statement of AD without the blocks' gate": (
        execute, "            or -(-(head.num_computed + n) // c.block_size) - head.num_blocks > free)",
        "            )", "spec.rules"),
}
DEFAULT = ("NP != made <", "I1 without blocks_used <= num_blocks", "the statement of I3 lets waiting keep a token")


def planted(monkeypatch: pytest.MonkeyPatch, module: types.ModuleType, anchor: str, replacement: str) -> None:
    """`module` loaded fresh from its text with the edit, and put where the vacuity row reads it."""
    copy = patched(module, (Edit(anchor, replacement),), "planted")
    if module is claims:
        monkeypatch.setattr(checks, "c", copy)
    elif module is checks:
        monkeypatch.setattr(vacuity, "checks", copy)
    elif module is spec.invariants:
        monkeypatch.setattr(execute, "check_step", copy.check_step)
    else:
        monkeypatch.setattr(vacuity, "step_violations", copy.step_violations)


def row_on(where: str, count: int = 6) -> dict[str, object]:
    module = spec.rules if where == "spec.rules" else faults.load(where)
    return vacuity.vacuity_row(count=count, only=((where, module),))


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in DEFAULT else pytest.mark.long) for n in PLANTS])
def test_a_weakened_claim_disagrees_with_its_statement(name, monkeypatch):
    module, anchor, replacement, where = PLANTS[name]
    count = 6 if name in DEFAULT else vacuity.WORKLOADS  # the long ones on as many workloads as prove --quick
    assert row_on(where, count)["disagreements"] == 0
    planted(monkeypatch, module, anchor, replacement)
    row = row_on(where, count)
    assert row["verdict"] == "disagree", row
    assert row["disagreements"] > 0 and "says" in str(row["first_difference"])


@pytest.mark.long
def test_the_formulas_agree_with_the_statements_and_every_claim_breaks():
    """The row as `prove --quick` runs it: no disagreement, and every claim broken on QUOTA steps of each kind."""
    row = vacuity.vacuity_row()
    assert row["verdict"] == "agree", row["first_difference"]
    assert not row["short"]
    assert set(row["broken_by_faults"]) == set(vacuity.JUDGED)  # type: ignore[arg-type]
    assert set(vacuity.JUDGED) | set(vacuity.ELSEWHERE) == {c.name for c in checks.CLAIMS}


def test_a_claim_no_step_breaks_is_reported_vacuous(monkeypatch):
    """With no fault to run and no change of a correct step, nothing breaks: every claim is short of its quota."""
    monkeypatch.setattr(vacuity, "PER_STATE", 0)
    monkeypatch.setattr(vacuity, "changes", lambda rng, s, batch: [])
    row = vacuity.vacuity_row(count=2, only=(("spec.rules", spec.rules),))
    assert row["verdict"] == "vacuous"
    assert set(row["short"]) >= {f"{c} (faults)" for c in vacuity.JUDGED}  # type: ignore[arg-type]


def test_update_moving_a_running_sequence_to_waiting_breaks_i5():
    """The statement of I5 once let update() move a running sequence to waiting's head (the formula did not);
    the row found the difference. update() neither preempts nor admits."""
    w = make_workload(Config(8, 1, 3, 5, 0), [Request("a", 2, 3, 1), Request("b", 2, 3, 1)])
    s = execute.run(spec.rules, w, 4)[1]
    post, moved = s.after_update, s.after_update.running[-1]
    after = replace(post, running=post.running[:-1], blocks_used=post.blocks_used - moved.num_blocks,
                    waiting=(replace(moved, num_computed=0, num_blocks=0, status=Status.WAITING),) + post.waiting)
    found = list(spec.invariants.i5_preempted_to_head(s.after_schedule, s.batch, after))
    assert found and "update() changed waiting" in found[0].message
    assert not list(spec.invariants.i5_preempted_to_head(s.after_schedule, s.batch, post))


@pytest.mark.long
def test_a_fault_whose_text_is_gone_is_left_out_and_named(monkeypatch):
    """A bug planted on a line a fault edits once made the row raise FaultError, and prove stopped there."""
    real = faults.load

    def load(name: str) -> types.ModuleType:
        if name == "max_num_seqs_off_by_one":
            raise faults.FaultError(f"fault {name!r}: anchor occurs 0 times")
        return real(name)
    monkeypatch.setattr(faults, "load", load)
    row = vacuity.vacuity_row(count=2)
    assert row["faults_not_applied"] == ["max_num_seqs_off_by_one"] and row["disagreements"] == 0
