"""``schedcheck prove``: run the claims, print one table, store or compare the results file.

Rows: the translation validation of the z3 encoding against spec/rules.py, every
bounded claim (BMC on the encoding), the induction step of each claim, and the
explicit-state model check of spec.rules itself. With ``--inject FAULT`` the
fault (``spec.faults``) is applied to the text of spec/rules.py and the patched
module is model-checked against every claim, and validated against the encoding;
the command succeeds when at least one claim breaks.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
import types
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import spec.rules
from spec import faults
from spec.bounded import (
    checks,
    induction,
    modelcheck,
    offstates,
    reach,
    relational,
    scale,
    vacuity,
    validate,
    values,
    wide,
)
from spec.bounded.encode import Bounds
from spec.bounded.replay import confirm
from spec.bounded.results import Rows, print_rows, store
from spec.errors import InvalidConfig
from spec.model import DEFAULT_POLICY, Policy, all_policies, policy_help

HERE = Path(__file__).parent
QUICK = Bounds(slots=2, steps=3, num_blocks=6, block_size=4, budget=6, max_num_seqs=2, prompt_len=6, max_tokens=3)
FULL = Bounds(slots=3, steps=10)  # the bound: N=3 requests, K=10 steps, lemma-free
# The full run (`schedcheck prove --write-results`) is time-boxed so it ends on a shared 2-core machine: each
# solver query gets FULL_TIMEOUT seconds and each BMC claim FULL_CLAIM_SECONDS in all; a claim that runs out
# is stored as unknown with the steps it proved (steps 1..k proved is the BMC at K=k).
FULL_TIMEOUT, FULL_CLAIM_SECONDS, FULL_INDUCTION_SLOTS = 200.0, 200.0, 4
# Then lemma-free BMC of the invariants at N=4 (max_num_seqs up to 4), FULL4_CLAIM_SECONDS per claim: the K reached
# is stored (steps_proved), not a K chosen in advance.
FULL4, FULL4_CLAIMS, FULL4_CLAIM_SECONDS = Bounds(slots=4, steps=10, max_num_seqs=4), \
    ("I1", "I2", "I3", "I4", "I5", "I6"), 90.0
RELATIONAL_FAULT = "preempt_clears_output"  # the relational induction of OUT must fail on it
# Model-checking scopes (bounds as in modelcheck.explore_all: an int is 1..v, a pair lo..hi): two requests over a
# wider range; three (what ordering bugs need) over a narrower one; two at block sizes 3 and 4; two at block size 1
# on a cache that makes one sequence thrash until it is preempted three times; three that crowd the cache to three
# preemptions in a run. `reach` is what a scope's states must show (modelcheck.Report), or its row fails: a scope
# that never preempts says nothing about preemption. `policies`: the policies it is checked under (default all;
# under vllm-v1 no workload within the stream's bounds preempts one sequence three times: a victim is admitted
# again only when its whole sequence fits).
Scope = dict[str, Any]
WIDE: Scope = dict(num_blocks=4, block_size=2, budget=4, max_num_seqs=2, requests=2, prompt_len=3, max_tokens=2)
THREE: Scope = dict(num_blocks=3, block_size=2, budget=3, max_num_seqs=3, requests=3, prompt_len=2, max_tokens=2)
LARGE_BLOCKS: Scope = dict(num_blocks=(2, 3), block_size=(3, 4), budget=3, max_num_seqs=(2, 2), requests=2,
                           prompt_len=4, max_tokens=2, reach=dict(most_preemptions=1))
THRASH: Scope = dict(num_blocks=(4, 5), block_size=1, budget=(2, 3), max_num_seqs=(2, 2), requests=2, prompt_len=4,
                     max_tokens=4, reach=dict(most_preempted=3), policies=(DEFAULT_POLICY,))
CROWD: Scope = dict(num_blocks=(4, 5), block_size=1, budget=(4, 5), max_num_seqs=(3, 3), requests=3,
                    prompt_len=(1, 2), max_tokens=(4, 4), reach=dict(most_preemptions=3))
MODEL_CHECK_QUICK: tuple[Scope, ...] = (WIDE, THREE, LARGE_BLOCKS, THRASH, CROWD)
# The full run's model check: three requests, and the quick run's scopes at larger block sizes and deep preemption.
MODEL_CHECK_FULL: tuple[Scope, ...] = (THREE, LARGE_BLOCKS, THRASH, CROWD)
# `prove --inject FAULT` without --quick: wider scopes than the quick ones (not stored in any results file).
MODEL_CHECK_INJECT: tuple[Scope, ...] = (
    dict(num_blocks=5, block_size=2, budget=4, max_num_seqs=2, requests=2, prompt_len=4, max_tokens=3),
    dict(num_blocks=4, block_size=2, budget=4, max_num_seqs=3, requests=3, prompt_len=3, max_tokens=2),
    LARGE_BLOCKS, THRASH, CROWD)
VALIDATE_QUICK, VALIDATE_FULL = validate.QUICK_COUNT, 200
SOLVER_CROSSCHECK = 3  # workloads on which the evaluated encoding is also compared with the solver's model


def policy_argument(text: str) -> Policy:
    """--policy's value, read by Policy.parse; argparse shows what is wrong in it (as check's --policy does)."""
    try:
        return Policy.parse(text)
    except InvalidConfig as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help=f"CI bounds ({QUICK.slots} slots, {QUICK.steps} steps)")
    for name, default in (("slots", FULL.slots), ("steps", FULL.steps), ("num-blocks", 8), ("block-size", 4),
                          ("budget", 8), ("max-num-seqs", 3), ("prompt-len", 8), ("max-tokens", 4)):
        p.add_argument(f"--{name}", type=int, default=None, help=f"bound (default {default}; --quick: smaller)")
    p.add_argument("--induction-slots", type=int, default=None,
                   help=f"N for the induction step (default {FULL_INDUCTION_SLOTS}; quick 2)")
    p.add_argument("--inject", metavar="FAULT",
                   choices=sorted(set(faults.BY_NAME) | set(faults.GUARDS) | set(faults.OBSERVABLE)
                                  | set(faults.NOT_EXPRESSIBLE)),
                   help="apply a fault of spec/faults.py to spec/rules.py and model-check the result")
    p.add_argument("--only", metavar="ROW", action="append",
                   help="only these rows (repeatable), added to the stored table: a claim (its BMC and, if it has "
                   "one, its induction step), `validation`, `wide`, `scale`, `vacuity`, `values`, `reach` or "
                   "`modelcheck`")
    p.add_argument("--lemmas", action="store_true",
                   help="BMC assumes the induction invariant before each step (the row then rests on the induction)")
    p.add_argument("--validate", type=int, default=None, metavar="N",
                   help=f"workloads of the validation stream (default {VALIDATE_FULL}; quick {VALIDATE_QUICK})")
    p.add_argument("--timeout", type=float, default=None,
                   help=f"seconds per solver query, then unknown (default {FULL_TIMEOUT:g}; quick 600)")
    p.add_argument("--claim-seconds", type=float, default=None,
                   help=f"seconds for all the steps of one BMC claim (default {FULL_CLAIM_SECONDS:g}; quick: no limit)")
    p.add_argument("--relational", action="store_true",
                   help="only the relational induction of OUT (two runs side by side), stored as one row")
    p.add_argument("--policy", type=policy_argument, default=DEFAULT_POLICY, metavar="POLICY",
                   help=f"the rules to prove the claims of (docs/rules.md, 'Policies'; default p07, the card): "
                   f"{policy_help()}; results of another policy are stored in results-<policy>*.json")
    p.add_argument("--write-results", action="store_true", help="store the table in spec/bounded/results*.json")
    p.add_argument("--coverage", action="store_true",
                   help="instead of the claims, regenerate conformance/corpus/coverage/ (one case per rule id)")


def results_name(policy: Policy, quick: bool) -> str:
    """The stored results of a policy: results.json and results-quick.json are the card's."""
    return ("results" if policy == DEFAULT_POLICY else f"results-{policy.slug}") + ("-quick.json" if quick else ".json")


def _bounds(args: argparse.Namespace) -> Bounds:
    base = QUICK if args.quick else FULL
    over = {f: getattr(args, f) for f in ("slots", "steps", "num_blocks", "block_size", "budget", "max_num_seqs",
                                          "prompt_len", "max_tokens") if getattr(args, f, None) is not None}
    for f, v in over.items():
        if v < 1:
            raise SystemExit(f"--{f.replace('_', '-')} must be >= 1, got {v}")
    policy = getattr(args, "policy", DEFAULT_POLICY)
    return Bounds(**{**{f: getattr(base, f) for f in Bounds.__slots__}, **over, "policy": policy})


def validation_row(count: int, rules: types.ModuleType = spec.rules,
                   solver: int = SOLVER_CROSSCHECK, policy: Policy = DEFAULT_POLICY) -> dict[str, object]:
    """The encoding against `rules` on `count` workloads of the stream and those that fill the quotas (the first
    `solver` also through z3), then one step from drawn states until each claim flag is raised; the row agrees
    only when nothing differs and every quota is met."""
    t = time.perf_counter()
    stream = replace(validate.STREAM, policy=policy)
    v = validate.Validator(stream, rules=rules)
    bad, stats = validate.validate(count, rules=rules, bounds=stream, validator=v)
    checked = 0
    if not bad and solver:
        for w in validate.stream(validate.SEED, solver, stream):
            found = v.compare(w, solver=True)
            checked += 1
            if found is not None:
                bad.append(found)
                break
    first_eos = 0
    if not bad:  # the sampler as the relational OUT reads it: the first eos draw of each slot
        by_first = validate.Validator(stream, rules=rules, first_eos=True)
        for w in validate.workloads(validate.SEED, count, stream):
            found = by_first.compare(w)
            first_eos += 1
            if found is not None:
                bad.append(replace(found, field=f"{found.field} (sampler: first eos)"))
                break
    flags = offstates.FlagCounts()
    if not bad:
        bad, flags = offstates.validate_states(validate.SEED, stream, rules)
    assert stats.quotas is not None
    sizes = stats.quotas.block_sizes
    short = stats.quotas.short() + flags.short(sizes)
    verdict = "disagree" if bad else "quota unmet" if short else "agree"
    claim = "encoding == spec.rules" + ("" if policy == DEFAULT_POLICY else f" ({policy})")
    return {"claim": claim, "kind": "validation", "workloads": stats.workloads,
            "steps": stats.steps, "preempting_steps": stats.preempting_steps,
            "self_preemptions": stats.self_preemptions, "double_preemptions": stats.double_preemptions,
            "readmissions": stats.readmissions, "solver_checked": checked, "first_eos_checked": first_eos,
            **({} if policy == DEFAULT_POLICY else {"policy": str(policy), "held_by_policy": stats.held_by_policy,
                                                    "held_whole": stats.held_whole}),
            "quotas": stats.quotas.to_json(), "states": flags.to_json(sizes),
            "verdict": verdict, "first_difference": str(bad[0]) if bad else None,
            "seconds": round(time.perf_counter() - t, 2)}


def relational_row(slots: int, timeout: float, policy: Policy = DEFAULT_POLICY) -> dict[str, object]:
    """OUT by relational induction; proved only if the same queries find a counterexample with the fault."""
    clean = relational.prove_out(slots, timeout=timeout, policy=policy)
    bad = relational.prove_out(slots, timeout=timeout, fault=RELATIONAL_FAULT, policy=policy)
    verdict = clean.verdict
    if verdict == "proved" and bad.verdict != "counterexample":
        print(f"the relational induction of OUT also holds with {RELATIONAL_FAULT} ({bad.verdict}): it cannot fail "
              "on the bug it is about, so it proves nothing; check spec/bounded/relational.py")
        verdict = "unknown"
    initial = relational.initial_holds(slots)
    row: dict[str, object] = {
        "claim": "OUT", "kind": "induction", "relational": True, "slots": slots,
        "block_sizes": list(range(1, Bounds().block_size + 1)),
        "block_sizes_proved": list(clean.block_sizes_proved), "timeout": timeout, "initial": initial,
        "verdict": verdict if initial else "counterexample", "seconds": clean.seconds,
        "fault_check": {"fault": RELATIONAL_FAULT, "verdict": bad.verdict, "broken": bad.broken,
                        "seconds": bad.seconds}}
    return row | ({"broken": clean.broken} if clean.broken else {})


def bmc_row(name: str, bounds: Bounds, timeout: float, lemmas: bool, claim_seconds: float | None
            ) -> dict[str, object]:
    """Lemma-free BMC of one claim (with `lemmas`: assuming Inv); a counterexample is replayed on spec.rules."""
    r = checks.check(name, bounds, timeout, lemmas=lemmas, total=claim_seconds)
    row: dict[str, object] = {"claim": name, "kind": "bmc", **r.to_json()}
    if claim_seconds is not None:
        row["claim_seconds"] = claim_seconds
    if r.workload is not None:
        row["replay"] = confirm(name, r.workload, bounds.steps)
    return row


def induction_rows(slots: int, timeout: float, policy: Policy = DEFAULT_POLICY,
                   only: tuple[str, ...] | None = None) -> Iterator[dict[str, object]]:
    """Inv holds initially, and each claim's induction step (or only those of `only`), at `slots` request slots
    (a row as each ends)."""
    if only is None:
        t = time.perf_counter()
        yield {"claim": "Inv initial", "kind": "induction", "slots": slots,
               "verdict": "proved" if induction.initial_holds(slots) else "counterexample",
               "seconds": round(time.perf_counter() - t, 2)}
    every = list(range(1, Bounds().block_size + 1))  # a sweep that leaves one out proves less than its row says
    for o in induction.prove(slots, timeout=timeout, policy=policy, only=only or induction.STEP_CLAIMS):
        yield {"claim": o.claim, "kind": "induction", "slots": o.slots, "block_sizes": list(o.block_sizes),
               "block_sizes_proved": list(o.block_sizes_proved), "timeout": timeout,
               "verdict": o.verdict if list(o.block_sizes) == every else "narrow", "seconds": o.seconds}


def model_check_rows(scopes: tuple[Scope, ...], rules: types.ModuleType = spec.rules,
                     every: bool = False, policy: Policy = DEFAULT_POLICY) -> list[dict[str, object]]:
    """One row per scope: every claim on every state of `rules`; proved only when nothing broke and the states
    reached what the scope's `reach` asks."""
    rows: list[dict[str, object]] = []
    for scope in (s for s in scopes if policy in s.get("policies", (policy,))):
        bounds = {k: v for k, v in scope.items() if k not in ("reach", "policies")}
        rep, n = modelcheck.explore_all(**bounds, rules=rules, every=every, policy=policy)
        reached = {"most_preemptions": rep.most_preemptions, "most_preempted": rep.most_preempted}
        short = [f"{k} {reached[k]} < {v}" for k, v in scope.get("reach", {}).items() if reached[k] < v]
        verdict = "counterexample" if rep.violation is not None else "unreached" if short else "proved"
        rows.append({"claim": "all claims + no deadlock", "kind": "modelcheck", "bounds": bounds, "scopes": n,
                     "distinct_states": rep.distinct, "depth": rep.depth, "states_per_second": int(rep.per_second),
                     **reached, "reach": scope.get("reach", {}), "unreached": short, "verdict": verdict,
                     "broken": [{"claim": c, "violation": m, "trace": list(t)} for c, m, t in rep.broken],
                     "seconds": round(rep.seconds, 2)})
    return rows


def model_check_beside(scopes: tuple[Scope, ...], policy: Policy) -> Callable[[], list[dict[str, object]]]:
    """Start the model check of spec.rules in a second process, beside the solver rows (it needs no solver, they
    no model checker: on two cores the run takes the longer of the two, not their sum); call the result for the
    rows. On one core it runs here, when called."""
    if (os.cpu_count() or 1) < 2:
        return lambda: model_check_rows(scopes, policy=policy)
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
    future = pool.submit(model_check_rows, scopes, policy=policy)

    def rows() -> list[dict[str, object]]:
        try:
            return future.result()
        finally:
            pool.shutdown()
    return rows


def main(args: argparse.Namespace) -> int:
    if getattr(args, "coverage", False):
        from spec.bounded import coverage
        return coverage.main([])
    if args.inject:
        return inject(args.inject, args.quick)
    bounds = _bounds(args)
    policy = bounds.policy
    timeout = args.timeout if args.timeout is not None else (600.0 if args.quick else FULL_TIMEOUT)
    claim_seconds = args.claim_seconds if args.claim_seconds is not None else \
        (None if args.quick else FULL_CLAIM_SECONDS)
    only = args.only or []
    names = [n for n in only if n in checks.BY_NAME] if only else [c.name for c in checks.CLAIMS]
    path = HERE / results_name(policy, args.quick)
    started = time.perf_counter()

    def save(complete: bool) -> None:  # after every row, so a run that is stopped leaves what it measured
        if args.write_results:
            store(path, rows, bounds, partial=bool(args.only), complete=complete,
                  wall=round(time.perf_counter() - started, 1))

    rows = Rows(save)
    relational_only = getattr(args, "relational", False)
    model_checked = None if relational_only or (only and "modelcheck" not in only) else \
        model_check_beside(MODEL_CHECK_QUICK if args.quick else MODEL_CHECK_FULL, policy)
    if relational_only:  # one row, added to the stored table like --only
        args.only = ["OUT (relational)"]
        n_ind = args.induction_slots or (2 if args.quick else FULL_INDUCTION_SLOTS)
        rows.append(relational_row(n_ind, timeout, policy))
        if args.write_results:
            save(complete=True)
        return 0 if rows[-1]["verdict"] == "proved" else 1
    if not only or "values" in only:  # the sizes and the eos values the rows below never vary
        rows.append(values.arithmetic_row())
        rows.append(values.eos_row())
    if not only or "wide" in only:  # spec/rules.py past the claims' bounds, against the encoding unrolled wider
        rows.append(wide.wide_row(policy=policy))
    if not only or "scale" in only:  # spec/rules.py at the thresholds of real code, judged by every claim's statement
        rows.append(scale.scale_row(scale.QUICK if args.quick else scale.FULL, policy=policy))
    if not only or "vacuity" in only:  # each claim's formula can fail: it says broken where its statement does
        rows.append(vacuity.vacuity_row(policy=policy))
    validated = True  # with --only and no `validation`, the stored validation row stands
    if not only or "validation" in only:
        count = args.validate or (VALIDATE_QUICK if args.quick else VALIDATE_FULL)
        for other in (p for p in all_policies() if p != policy):  # the other policies' branches of spec/rules.py, which
            rows.append(validation_row(count, policy=other))  # the rows below (about `policy`) never run
        rows.append(validation_row(count, policy=policy))
        validated = rows[-1]["verdict"] == "agree"  # another policy's disagreement fails the run, not this policy's BMC
        if rows[-1]["verdict"] == "quota unmet":
            print(f"the validation compared no step of some kinds: {rows[-1]['quotas']['short']} "  # type: ignore[index]
                  f"{rows[-1]['states']['short']}; the encoding is not validated there, so BMC and induction "  # type: ignore[index]
                  "are skipped. Widen quotas.aimed or offstates.draw, or fix spec/rules.py if it can no longer "
                  "reach them. The model check below runs spec.rules itself:")
        elif not validated:  # the solver's proofs would be about a model that is not the spec
            print(f"the encoding differs from spec/rules.py: {rows[-1]['first_difference']}\n"
                  "so BMC and induction are skipped (they would prove things about the encoding only); fix "
                  "spec/rules.py or spec/bounded/transition.py. The model check below runs spec.rules itself:")
    for name in names if validated else []:
        rows.append(bmc_row(name, checks.at_least(bounds, name), timeout, args.lemmas, claim_seconds))
    if (not only or "reach" in only) and validated:  # reach only grows with the bounds: the quick answers hold
        base = bounds if args.quick else replace(QUICK, policy=policy)  # above, in the full run
        for slots in sorted({checks.at_least(base, c.name).slots for c in checks.CLAIMS}):  # a row per least N
            rows.append(reach.reach(replace(base, slots=slots), tuple(
                c.name for c in checks.CLAIMS if checks.at_least(base, c.name).slots == slots), timeout,
                ends=slots == base.slots))
    if not only and not args.quick and validated:
        for name in FULL4_CLAIMS:  # N=4: as far as the time box reaches
            rows.append(bmc_row(name, replace(FULL4, policy=policy), timeout, False, FULL4_CLAIM_SECONDS))
    inducted = tuple(n for n in names if n in induction.STEP_CLAIMS)
    if validated and (inducted or not only):
        n_ind = args.induction_slots or (2 if args.quick else FULL_INDUCTION_SLOTS)
        for row in induction_rows(n_ind, timeout, policy, inducted if only else None):
            rows.append(row)
        if not only and not args.quick:  # about 2.5 min at N=4; the quick run stays under 3 min without it
            rows.append(relational_row(n_ind, timeout, policy))
    if model_checked is not None:
        for mc_row in model_checked():
            rows.append(mc_row)
    ok = all(r["verdict"] in ("proved", "agree", "reached") for r in rows)
    for r in rows:
        if r.get("unreached"):
            print(f"the model check of {r['bounds']} did not reach {r['unreached']}: widen the scope")
    if args.write_results:
        save(complete=True)
        print(f"wrote {path} ({round(time.perf_counter() - started)} s in all)")
    if not ok:
        print("NOT all proved: a counterexample or a disagreement above is a bug in spec/rules.py or in the encoding "
              "(spec/bounded/transition.py); an unknown needs a longer --timeout or smaller bounds")
    return 0 if ok else 1


def inject(name: str, quick: bool, scopes: tuple[Scope, ...] | None = None) -> int:
    """Model-check spec/rules.py with fault `name` and validate the encoding against it; 0 when a claim breaks."""
    if name in faults.NOT_EXPRESSIBLE:
        print(f"{name}: not expressible as an edit of spec/rules.py: {faults.NOT_EXPRESSIBLE[name]}")
        return 1
    rules = faults.load(name)
    if scopes is None:
        scopes = MODEL_CHECK_QUICK if quick else MODEL_CHECK_INJECT
    rows = model_check_rows(scopes, rules, every=True)
    broken: dict[str, str] = {}
    for r in rows:
        for b in r["broken"]:  # type: ignore[attr-defined]
            broken.setdefault(b["claim"], b["violation"])
    row = validation_row(VALIDATE_QUICK, rules, solver=0)
    print_rows(rows + [row])
    for claim, violation in broken.items():
        print(f"  {claim}: {violation}")
    if row["verdict"] == "disagree":
        print(f"  the encoding differs from the spec with {name}: {row['first_difference']}")
    if not broken:
        print(f"{name}: no claim breaks in the model-checking scopes; the validation "
              f"{'sees it' if row['verdict'] == 'disagree' else 'does not see it either'}. A fault no claim can see "
              "is left to the conformance suite's differential check (schedcheck check)")
        return 1
    print(f"{name}: breaks {', '.join(broken)}")
    return 0
