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
import time
import types
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import spec.rules
from spec import faults
from spec.bounded import checks, induction, modelcheck, relational, validate
from spec.bounded.encode import Bounds
from spec.bounded.replay import confirm
from spec.bounded.results import Rows, print_rows, store
from spec.model import DEFAULT_POLICY, POLICIES

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
# Model-checking scopes: two requests over a wider range, and three (what ordering bugs need) over a narrower one.
MODEL_CHECK_QUICK = (
    dict(num_blocks=4, block_size=2, budget=4, max_num_seqs=2, requests=2, prompt_len=3, max_tokens=2),
    dict(num_blocks=3, block_size=2, budget=3, max_num_seqs=3, requests=3, prompt_len=2, max_tokens=2))
# The full run's model check: three requests (the quick run has this scope too, and two requests wider).
MODEL_CHECK_FULL = (
    dict(num_blocks=3, block_size=2, budget=3, max_num_seqs=3, requests=3, prompt_len=2, max_tokens=2),)
# `prove --inject FAULT` without --quick: wider scopes than the quick ones (not stored in any results file).
MODEL_CHECK_INJECT = (
    dict(num_blocks=5, block_size=2, budget=4, max_num_seqs=2, requests=2, prompt_len=4, max_tokens=3),
    dict(num_blocks=4, block_size=2, budget=4, max_num_seqs=3, requests=3, prompt_len=3, max_tokens=2))
VALIDATE_QUICK, VALIDATE_FULL = validate.QUICK_COUNT, 200
SOLVER_CROSSCHECK = 3  # workloads on which the evaluated encoding is also compared with the solver's model


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help=f"CI bounds ({QUICK.slots} slots, {QUICK.steps} steps)")
    for name, default in (("slots", FULL.slots), ("steps", FULL.steps), ("num-blocks", 8), ("block-size", 4),
                          ("budget", 8), ("max-num-seqs", 3), ("prompt-len", 8), ("max-tokens", 4)):
        p.add_argument(f"--{name}", type=int, default=None, help=f"bound (default {default}; --quick: smaller)")
    p.add_argument("--induction-slots", type=int, default=None,
                   help=f"N for the induction step (default {FULL_INDUCTION_SLOTS}; quick 2)")
    p.add_argument("--inject", metavar="FAULT",
                   choices=sorted(set(faults.BY_NAME) | set(faults.GUARDS) | set(faults.NOT_EXPRESSIBLE)),
                   help="apply a fault of spec/faults.py to spec/rules.py and model-check the result")
    p.add_argument("--only", metavar="CLAIM", action="append", help="check only these claims by BMC (repeatable)")
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
    p.add_argument("--policy", choices=sorted(POLICIES), default=DEFAULT_POLICY,
                   help="the rules to prove the claims of (docs/rules.md, 'Policies'; default p07, the card); "
                   "results of another policy are stored in results-<policy>*.json")
    p.add_argument("--write-results", action="store_true", help="store the table in spec/bounded/results*.json")
    p.add_argument("--coverage", action="store_true",
                   help="instead of the claims, regenerate conformance/corpus/coverage/ (one case per rule id)")


def results_name(policy: str, quick: bool) -> str:
    """The stored results of a policy: results.json and results-quick.json are the card's."""
    return ("results" if policy == DEFAULT_POLICY else f"results-{policy}") + ("-quick.json" if quick else ".json")


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
                   solver: int = SOLVER_CROSSCHECK, policy: str = DEFAULT_POLICY) -> dict[str, object]:
    """The encoding against `rules` on `count` workloads of the stream (the first `solver` also through z3)."""
    t = time.perf_counter()
    stream = replace(validate.STREAM, policy=policy)
    bad, stats = validate.validate(count, rules=rules, bounds=stream)
    checked = 0
    if not bad and solver:
        v = validate.Validator(stream, rules=rules)
        for w in validate.stream(validate.SEED, solver, stream):
            found = v.compare(w, solver=True)
            checked += 1
            if found is not None:
                bad.append(found)
                break
    return {"claim": "encoding == spec.rules", "kind": "validation", "workloads": stats.workloads,
            "steps": stats.steps, "preempting_steps": stats.preempting_steps,
            "self_preemptions": stats.self_preemptions, "double_preemptions": stats.double_preemptions,
            "readmissions": stats.readmissions, "solver_checked": checked,
            **({} if policy == DEFAULT_POLICY else {"policy": policy, "held_by_policy": stats.held_by_policy,
                                                    "held_whole": stats.held_whole}),
            "verdict": "agree" if not bad else "disagree", "first_difference": str(bad[0]) if bad else None,
            "seconds": round(time.perf_counter() - t, 2)}


def relational_row(slots: int, timeout: float, policy: str = DEFAULT_POLICY) -> dict[str, object]:
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
        "claim": "OUT", "kind": "induction", "relational": True, "slots": slots, "block_sizes": [1, 2, 3, 4],
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


def induction_rows(slots: int, timeout: float, policy: str = DEFAULT_POLICY) -> Iterator[dict[str, object]]:
    """Inv holds initially, and each claim's induction step, at `slots` request slots (a row as each ends)."""
    t = time.perf_counter()
    yield {"claim": "Inv initial", "kind": "induction", "slots": slots,
           "verdict": "proved" if induction.initial_holds(slots) else "counterexample",
           "seconds": round(time.perf_counter() - t, 2)}
    for o in induction.prove(slots, timeout=timeout, policy=policy):
        yield {"claim": o.claim, "kind": "induction", "slots": o.slots, "block_sizes": list(o.block_sizes),
               "block_sizes_proved": list(o.block_sizes_proved), "timeout": timeout,
               "verdict": o.verdict, "seconds": o.seconds}


def model_check_rows(scopes: tuple[dict[str, int], ...], rules: types.ModuleType = spec.rules,
                     every: bool = False, policy: str = DEFAULT_POLICY) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for scope in scopes:
        rep, n = modelcheck.explore_all(**scope, rules=rules, every=every, policy=policy)
        rows.append({"claim": "all claims + no deadlock", "kind": "modelcheck", "bounds": scope, "scopes": n,
                     "distinct_states": rep.distinct, "depth": rep.depth, "states_per_second": int(rep.per_second),
                     "verdict": "proved" if rep.violation is None else "counterexample",
                     "broken": [{"claim": c, "violation": m, "trace": list(t)} for c, m, t in rep.broken],
                     "seconds": round(rep.seconds, 2)})
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
    names = args.only or [c.name for c in checks.CLAIMS]
    path = HERE / results_name(policy, args.quick)
    started = time.perf_counter()

    def save(complete: bool) -> None:  # after every row, so a run that is stopped leaves what it measured
        if args.write_results:
            store(path, rows, bounds, partial=bool(args.only), complete=complete,
                  wall=round(time.perf_counter() - started, 1))

    rows = Rows(save)
    if getattr(args, "relational", False):  # one row, added to the stored table like --only
        args.only = ["OUT (relational)"]
        n_ind = args.induction_slots or (2 if args.quick else FULL_INDUCTION_SLOTS)
        rows.append(relational_row(n_ind, timeout, policy))
        if args.write_results:
            save(complete=True)
        return 0 if rows[-1]["verdict"] == "proved" else 1
    if not args.only:
        rows.append(validation_row(args.validate or (VALIDATE_QUICK if args.quick else VALIDATE_FULL),
                                   policy=policy))
        if rows[-1]["verdict"] != "agree":  # the solver's proofs would be about a model that is not the spec
            print(f"the encoding differs from spec/rules.py: {rows[-1]['first_difference']}\n"
                  "so BMC and induction are skipped (they would prove things about the encoding only); fix "
                  "spec/rules.py or spec/bounded/transition.py. The model check below runs spec.rules itself:")
            names = []
    for name in names:
        rows.append(bmc_row(name, bounds, timeout, args.lemmas, claim_seconds))
    if not args.only and not args.quick and rows[0]["verdict"] == "agree":
        for name in FULL4_CLAIMS:  # N=4: as far as the time box reaches
            rows.append(bmc_row(name, replace(FULL4, policy=policy), timeout, False, FULL4_CLAIM_SECONDS))
    if not args.only and rows[0]["verdict"] == "agree":
        n_ind = args.induction_slots or (2 if args.quick else FULL_INDUCTION_SLOTS)
        for row in induction_rows(n_ind, timeout, policy):
            rows.append(row)
        if not args.quick:  # about 2.5 min at N=4; the quick run stays under 3 min without it
            rows.append(relational_row(n_ind, timeout, policy))
    if not args.only:
        for mc_row in model_check_rows(MODEL_CHECK_QUICK if args.quick else MODEL_CHECK_FULL, policy=policy):
            rows.append(mc_row)
    ok = all(r["verdict"] in ("proved", "agree") for r in rows)
    if args.write_results:
        save(complete=True)
        print(f"wrote {path} ({round(time.perf_counter() - started)} s in all)")
    if not ok:
        print("NOT all proved: a counterexample or a disagreement above is a bug in spec/rules.py or in the encoding "
              "(spec/bounded/transition.py); an unknown needs a longer --timeout or smaller bounds")
    return 0 if ok else 1


def inject(name: str, quick: bool, scopes: tuple[dict[str, int], ...] | None = None) -> int:
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
