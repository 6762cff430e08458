"""The CrossHair contracts and spec/impl pairs: they hold on samples, CrossHair finds nothing in them,
and it does find planted bugs (a wrong contract, catalog bugs in the spec, a wrong victim in impl/)."""

import inspect
import itertools
import os
import subprocess
import sys
import textwrap

import pytest

from conformance.crosscheck import diffpairs
from spec import faults
from spec.bounded import contracts
from spec.bounded.contracts import Step, between_steps

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREEMPT = (2, 1, 2, 2, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 0)  # phase 1 preempts b (P1.preempt), then P2.stop
SKIP_SELF = (2, 2, 2, 2, 2, 1, 2, 1, 2, 2, 1, 2, 1, 1, 0)  # b is running[-1] and preempts itself
FULL = (2, 2, 2, 3, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 0)  # two running = max_num_seqs: c waits (P2.full)
DECODE = (8, 2, 3, 8, 2, 3, 2, 1, 2, 3, 0, 1, 4, 1, 0)  # room for everyone: c is admitted
STOP = (3, 4, 2, 8, 1, 5, 1, 0, 6, 1, 0, 2, 1, 1, 0)  # the head b does not fit, c behind it would (P2.stop)
STATES = (PREEMPT, SKIP_SELF, FULL, DECODE, STOP)


def _clauses(fn, kind):
    return [line.strip()[len(kind) + 1:] for line in inspect.getdoc(fn).splitlines()
            if line.strip().startswith(kind + ":")]


def broken_posts(fn, args, result=None):
    """The post: lines of fn's contract that are false on args (every pre: line must hold)."""
    names = {**vars(sys.modules[fn.__module__]), **dict(zip(inspect.signature(fn).parameters, args, strict=True))}
    assert all(eval(pre, names) for pre in _clauses(fn, "pre")), f"{fn.__name__}{args} breaks a pre: line"
    names["__return__"] = fn(*args) if result is None else result
    return [post for post in _clauses(fn, "post") if not eval(post, names)]


def test_helper_contracts_hold_on_samples():
    assert contracts.blocks_for_rounds_up(4, 9) == 3
    assert contracts.try_grow_keeps_accounting(4, 2, 3, 1, 4)
    assert contracts.chunk_stays_within_tokens(6, 0, 0, 4) == 4


@pytest.mark.parametrize("args", STATES)
def test_phase_contracts_hold_on_samples(args):
    for fn in (contracts.phase1_keeps_invariants, contracts.phase2_keeps_invariants,
               contracts.schedule_keeps_invariants, contracts.preempt_resets_victim):
        assert broken_posts(fn, args) == [], fn.__name__
    for eos in ((0, 0, 0), (1, 1, 1)):
        assert broken_posts(contracts.update_keeps_invariants, args + eos) == []


def test_samples_reach_the_rules_they_name():
    from spec.rules import schedule_explained
    rules = [{e.rule for e in schedule_explained(between_steps(*args))[2]} for args in STATES]
    assert {"P1.preempt", "P2.stop"} <= rules[0] and "P1.skip_self" in rules[1] and "P2.full" in rules[2]
    assert "P2.stop" in rules[4] and not rules[3] & {"P1.preempt", "P2.stop", "P2.full"}
    assert contracts.phase1_keeps_invariants(*PREEMPT).after.num_preemptions == 1


def test_between_steps_rejects_what_is_not_a_state_between_steps():
    assert between_steps(*PREEMPT) is not None
    assert between_steps(1, 1, 2, 2, 0, 3, 1, 0, 1, 1, 0, 1, 1, 1, 0) is None  # a's 3 tokens need 3 blocks
    assert between_steps(2, 1, 1, 2, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 0) is None  # 2 running, max_num_seqs 1
    assert between_steps(8, 2, 3, 8, 1, 2, 2, 0, 1, 1, 0, 2, 1, 1, 0) is None  # computed 2 = num_tokens


@pytest.mark.parametrize("bug", ["preempt_to_tail", "preempt_clears_output", "phase2_continue", "budget_not_shared"])
def test_phase_contracts_catch_a_planted_bug(bug):
    """The same post: lines, on a step of spec/rules.py with a fault of spec/faults.py, are false."""
    fn = contracts.schedule_keeps_invariants
    found = []
    for args in STATES:
        state = between_steps(*args)
        after, batch = faults.load(bug).schedule(state)
        found += broken_posts(fn, args, Step(state, batch, after, args[3], args[3] - sum(n for _, n in batch)))
    assert found, f"{bug} breaks no post: line on the samples"


def test_run_contract_holds_on_samples():
    assert contracts.run_keeps_invariants(2, 1, 2, 4, 1, 2, 1, 2, 1, 1, 3) == ()
    assert contracts.run_keeps_invariants(3, 2, 1, 3, 5, 2, 2, 3, 0, 0, 1) == ()


def test_spec_and_impl_agree_on_a_small_domain():
    """Exhaustive on a corner of the diffbehavior domain; the spec with the victim_first fault must differ in it."""
    planted = 0
    for args in itertools.product(range(1, 4), (1, 2), (2,), range(1, 4), range(1, 4), range(1, 4), range(1, 4),
                                  range(1, 4), (0, 1), (3,), (3,)):
        spec = diffpairs.spec_run(*args)
        assert spec == diffpairs.impl_run(*args), args
        planted += spec != diffpairs.victim_first_run(*args)
    assert planted > 0
    planted = 0
    for args in itertools.product(range(2, 5), (1, 2), (2, 3), (2, 3, 5), range(4), (1, 4), (1, 3), (0, 2), (2,),
                                  (2,), (1,), range(1, 5), (1, 3), (1, 2), (0,), (0,), (1,), (0,)):
        spec = diffpairs.spec_step(*args)
        assert spec == diffpairs.impl_step(*args), args
        planted += spec != diffpairs.victim_first_step(*args)
    assert planted > 0


def test_pairs_return_none_outside_the_domain():
    outside = (0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0)  # num_blocks 0
    assert diffpairs.spec_run(*outside) is None is diffpairs.impl_run(*outside)
    assert diffpairs.spec_step(*(0,) * 18) is None is diffpairs.impl_step(*(0,) * 18)
    rejected = diffpairs.spec_run(1, 1, 1, 1, 3, 1, 1, 1, 0, 0, 0)  # a needs 3 blocks, there is 1
    assert isinstance(rejected, str) and rejected == diffpairs.impl_run(1, 1, 1, 1, 3, 1, 1, 1, 0, 0, 0)


# --- CrossHair itself (slow) ------------------------------------------------------------------


def _crosshair(*args, timeout=1800, path=()):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((*path, ROOT))}
    return subprocess.run([sys.executable, "-m", "crosshair", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


@pytest.mark.slow
def test_crosshair_finds_nothing_in_the_contracts():
    r = _crosshair("check", "--report_all", "spec.bounded.contracts")
    assert r.returncode == 0 and ": error:" not in r.stdout, r.stdout + r.stderr


@pytest.mark.slow
def test_crosshair_refutes_a_wrong_contract(tmp_path):
    bad = tmp_path / "wrong_contract.py"
    bad.write_text(textwrap.dedent('''
        from spec.model import Config
        from spec.rules import blocks_for

        def floor_not_ceil(block_size: int, tokens: int) -> int:
            """
            pre: 1 <= block_size <= 8 and 0 <= tokens <= 64
            post: __return__ * block_size <= tokens
            """
            return blocks_for(block_size, tokens)
    '''))
    r = _crosshair("check", "--per_condition_timeout=20", str(bad), timeout=600)
    assert r.returncode == 1 and "floor_not_ceil" in r.stdout, r.stdout + r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("bug", ["preempt_to_tail", "phase2_continue"])
def test_crosshair_finds_a_catalog_bug_through_the_schedule_contract(tmp_path, bug):
    """schedule_keeps_invariants's own pre:/post: lines over spec/rules.py with the fault: refuted."""
    fn = contracts.schedule_keeps_invariants
    params = ", ".join(inspect.signature(fn).parameters)
    doc = textwrap.indent(inspect.getdoc(fn), "    ")
    (tmp_path / "planted_contract.py").write_text(
        "from spec import faults\n"
        "from spec.bounded.contracts import Step, between_steps, check_step, spent, within_limits\n\n\n"
        f"def {bug}({', '.join(p + ': int' for p in inspect.signature(fn).parameters)}) -> Step:\n"
        f'    """\n{doc}\n    """\n'
        f"    state = between_steps({params})\n"
        f"    after, batch = faults.load({bug!r}).schedule(state)\n"
        "    return Step(state, batch, after, budget, budget - sum(n for _, n in batch))\n")
    r = _crosshair("check", "--per_condition_timeout=20", f"planted_contract.{bug}", timeout=600,
                   path=(str(tmp_path),))
    assert r.returncode == 1 and f"when calling {bug}(" in r.stdout, r.stdout + r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("pair", ["run", "step"])
def test_diffbehavior_finds_no_difference_between_spec_and_impl(pair):
    r = _crosshair("diffbehavior", "--per_condition_timeout=120", f"conformance.crosscheck.diffpairs.spec_{pair}",
                   f"conformance.crosscheck.diffpairs.impl_{pair}")
    assert r.returncode == 0 and "No differences found" in r.stdout, r.stdout + r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("pair", ["run", "step"])
def test_diffbehavior_finds_the_planted_wrong_victim(pair):
    r = _crosshair("diffbehavior", "--per_condition_timeout=120", f"conformance.crosscheck.diffpairs.spec_{pair}",
                   f"conformance.crosscheck.diffpairs.victim_first_{pair}")
    assert r.returncode == 1 and "Given:" in r.stdout, r.stdout + r.stderr
