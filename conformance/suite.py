"""The whole conformance run: ``run(target, profile) -> Report``.

Sources of workloads, in order: the card's golden cases, the frozen corpus, then the
profile's stages (its base profile's first): bounded-exhaustive scopes, edge-biased and
scale Hypothesis examples, and the lockstep state machine; last, the token-value cases
(conformance/workloads/sentinels.py). The first failure of each check is shrunk to the fewest
requests and steps. Everything is deterministic; timings are kept out of the JSON.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import replace

from conformance.adapters import ApiNotes, LoadError, load_target
from conformance.capabilities import DEFAULT_CAPABILITIES, CapabilityError, declared
from conformance.checks import probes
from conformance.checks.checkers import CHECKS, Finding
from conformance.checks.diagnosis import diagnose_report, history_prelude, hung_sources
from conformance.checks.fresh import Fresh
from conformance.checks.history import CONFIRM_MAX, after_history, apart
from conformance.checks.machine import run_machine, workload_runs
from conformance.checks.machine_run import machine_finding
from conformance.checks.shrink import shrink
from conformance.checks.workload import WORKLOAD_CHECKS, WhiteBox, predicate, probe_white_box
from conformance.drivers import run_workload, runnable
from conformance.limits import HangLimit, hang_ledger
from conformance.profiles import PROFILES, Profile, Stage
from conformance.reports.report import CheckResult, Counterexample, Report
from conformance.sources import HANGS_EXPLORING, Progress, Run, run_stage, run_token_values, stateful_finding
from conformance.starter import unimplemented
from conformance.workloads.corpus import CORPUS_DIR, CorpusResult, Vector, load_corpus, run_corpus
from spec.feasible import liveness_bound
from spec.model import DEFAULT_POLICY, Policy
from spec.trace import Workload, with_policy

HANGS_SHRINKING = 6  # ... and, after that, while it shrinks and confirms the counterexamples it has
HANGS_DIAGNOSING = 1  # ... and, after that, while it tells known bugs apart (the workloads that hung left out)
CORPUS_PATH = "/".join(CORPUS_DIR.parts[-3:])  # conformance/workloads/data: where a corpus vector's file is




def run(target: str, profile: str | Profile = "quick", adapter: str | None = None, white_box: bool = True,
        families: Iterable[str] | None = None, progress: Progress | None = None, diagnose: bool = True,
        policy: Policy | None = None) -> Report:
    """Check `target` (a path, a dotted module, 'spec' or 'impl') under `policy`; LoadError if it cannot be loaded.

    With no policy, the one the adapter reports for its engine (Capabilities.policy), else the card's.

    A fault in the suite itself gives verdict ERROR with its traceback, never PASS:
    the submission's own exceptions are caught by the drivers and become findings.
    """
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    if policy is not None and type(policy) is not Policy:
        raise LoadError(f"policy must be a Policy, got {policy!r}; read a written one with spec.model Policy.parse")
    factory = load_target(target, adapter)
    try:  # a submission's own class never declares anything: no extra instance for it
        caps = DEFAULT_CAPABILITIES if adapter is None else declared(factory)
        engine = caps.policy()
    except CapabilityError as e:  # the adapter's declaration, not the suite: a load error (exit 2)
        raise LoadError(str(e)) from None
    policy, engine_note = judged_under(policy, engine)
    results = {c: CheckResult() for c in CHECKS}
    report = Report(target, adapter, prof, white_box, results, {}, [], 0, policy=policy)
    report.notes.extend(engine_note)
    api_notes = getattr(factory, "notes", None)  # values read although not of docs/api.md's types: notes, not findings
    if isinstance(api_notes, ApiNotes):
        report.notes.extend(api_notes.values())
        api_notes.sink = report.notes
    started = time.perf_counter()
    try:
        with hang_ledger(HANGS_EXPLORING) as ledger:
            tick = progress or (lambda stage, done, total: None)
            r = Run(factory, white_box, results, target=target, adapter=adapter, notes=report.notes, ledger=ledger,
                    policy=policy, capabilities=caps)
            stopped = _explore(report, r, prof, families, tick)
            ledger.allow(HANGS_SHRINKING)
            _counterexamples(r, tick)
            for check in CHECKS:
                if results[check].status == "pending":
                    results[check].status = "unknown" if stopped and check not in r.complete else "pass"
            if diagnose and report.counterexamples:
                _diagnose(report, r)
    except CapabilityError as e:  # the adapter's declaration, not the suite: a load error (exit 2)
        raise LoadError(str(e)) from None
    except Exception:  # the suite's own fault: report it, never let it pass
        report.error = traceback.format_exc()
        for c in results.values():
            c.status = "unknown" if c.status == "pending" else c.status
    if report.verdict == "FAIL" and adapter is None:  # the suite's own copy, once it has run: no run depends on it
        report.unimplemented = tuple(unimplemented(factory))
    report.timings = {"total": time.perf_counter() - started, "first_finding": r.first_seconds}
    return report


def _diagnose(report: Report, r: Run) -> None:
    """Name the known bugs consistent with the findings, leaving out the workloads the submission hung on.

    Telling bugs apart reruns the submission, and a rerun of a hang costs its whole time
    limit again: those findings are left out and named, and the other findings are diagnosed
    with a fresh allowance of HANGS_DIAGNOSING more hangs.
    """
    hung = r.ledger.hung
    left_out = hung_sources(report, r.failing, hung)
    r.ledger.allow(HANGS_DIAGNOSING)
    try:
        diagnosis = diagnose_report(report, r.factory, r.failing, r.capabilities, hung)
    except HangLimit:
        report.notes.append("diagnosis stopped: a run hung while known bugs were told apart, on a workload that had "
                            "not hung before; the findings stand, without a diagnosis")
        return
    if diagnosis is not None:
        report.diagnosis = diagnosis.to_json()
    if not left_out:
        return
    how = _without(left_out)
    if diagnosis is not None:
        report.notes.append(f"diagnosis: left out the findings on {_listed(left_out)}: their runs hung, and telling "
                            f"known bugs apart would rerun them (the diagnosis covers the other findings); {how}")
    else:
        report.notes.append(f"diagnosis skipped: every counterexample is on a workload that hung "
                            f"({_listed(left_out)}), and telling known bugs apart would rerun them; {how}")


def _listed(sources: list[str], most: int = 5) -> str:
    more = f" and {len(sources) - most} more" if len(sources) > most else ""
    return ", ".join(sources[:most]) + more


def _without(sources: list[str]) -> str:
    """How to check without the corpus vectors that hung (the CLI leaves out whole families), or rerun one alone."""
    vectors = [s.removeprefix("corpus/") for s in sources if s.startswith("corpus/")]
    replay = "schedcheck replay TRACE PATH, where TRACE is a trace from --trace-dir"
    if not vectors:
        return f"fix the hang, then check again; to rerun one alone: {replay}"
    families = list(dict.fromkeys(v.split("/")[0] for v in vectors))
    them, family = ("it", "family") if len(vectors) == 1 else ("them", "families" if len(families) > 1 else "family")
    return (f"to check without {them}, add {' '.join(f'--exclude-family {f}' for f in families)} (it leaves out the "
            f"whole {family}; no option leaves out a single vector); to rerun one alone: {replay} or a vector's "
            f"file, such as {CORPUS_PATH}/{vectors[0]}.json")


def _explore(report: Report, r: Run, prof: Profile, families: Iterable[str] | None, tick: Progress) -> bool:
    """Run every source of workloads; True when the submission hung too often and the rest was not run."""
    try:
        _run_checks(report, r, prof, families, tick)
    except HangLimit:
        report.notes.append(
            f"stopped early: {r.ledger.hangs} runs did not end within the time limit, so the rest of the "
            "workloads were not run and the checks without a finding are UNKNOWN; fix the hang in the "
            "counterexample below, then check again")
        return True
    return False


def judged_under(asked: Policy | None, engine: Policy | None) -> tuple[Policy, list[str]]:
    """The policy a run judges by, and a note when the adapter's engine says something about it: the policy asked
    for, else the engine's, else the card's."""
    if asked is None:
        if engine is None:
            return DEFAULT_POLICY, []
        return engine, [f"judged under policy {engine}, the one the adapter reports for its engine as configured"]
    if engine is not None and engine != asked:
        return asked, [f"judged under policy {asked} as asked; the adapter reports that its engine, as configured, "
                       f"follows {engine} (check without --policy to judge it by that)"]
    return asked, []


def _run_checks(report: Report, r: Run, prof: Profile, families: Iterable[str] | None, tick: Progress) -> None:
    factory, results, notes = r.factory, report.checks, report.notes
    r.fresh = Fresh.of(r.target, r.adapter, r.white_box)
    probed = probe_white_box(r.fresh.copy() or factory) if r.white_box else WhiteBox(False, "white-box checks "
                                                                                        "skipped: --black-box")
    if not probed.on:
        notes.append(f"{probed.note}; the invariants check sees only what the batches show: at most "
                     "max_num_batched_tokens tokens (I2) and max_num_seqs sequences (I6) in each")
        r.white_box = report.white_box = False
    elif probed.note is not None:
        notes.append(probed.note)
    white_box = r.white_box
    r.fresh.white_box = white_box

    cases = [c for c in probes.golden_under(r.policy, notes) if r.capabilities.holds(c.workload)]
    for i, case in enumerate(cases):
        found = probes.golden(case, r.factory, white_box)  # r.factory: a fresh copy replaces one history spoilt
        r.record("golden", case.workload, found[0] if found else None, f"golden/{case.name}")
        tick("golden", i + 1, len(cases))
    r.complete.add("golden")
    if not cases:
        results["golden"].status = "skipped"

    vectors, corpus_notes = load_corpus(families=families)
    vectors = [replace(v, workload=with_policy(v.workload, r.policy)) for v in vectors]
    held = [v for v in vectors if r.capabilities.holds(v.workload)]
    if len(held) < len(vectors):
        notes.append(f"{len(vectors) - len(held)} corpus vectors left out: the adapter declares the engine holds "
                     f"at most {r.capabilities.limits()} (docs/adapters.md, Capabilities)")
        vectors = held
    report.vectors = len(vectors)
    corpus_start = time.perf_counter() - r.started
    notes += corpus_notes
    checks = tuple(c for c in WORKLOAD_CHECKS if results[c].status != "skipped")
    corpus = run_corpus(vectors, r.factory, white_box, checks, lambda i: tick("corpus", i, len(vectors)))
    report.features = corpus.features
    by_id = {v.vector_id: v for v in vectors}
    _confirm_corpus(r, corpus, by_id)
    r.failing = [(f"corpus/{i}", by_id[i].workload, finding) for i, finding in corpus.lead.items()]
    for check in checks:
        results[check].runs += corpus.runs[check]
        results[check].failed += len(corpus.failed[check])
        if check in corpus.first:
            failed = [by_id[i] for i in corpus.failed[check]]
            v, finding = corpus.first[check] if corpus.stopped else \
                _smallest_scale_failure(r, check, corpus.first[check], failed)
            r.first[check] = (by_id[v.vector_id].workload, finding, f"corpus/{v.vector_id}")
    if r.first_seconds is None and corpus.seconds_to_first is not None:
        r.first_seconds = corpus_start + corpus.seconds_to_first
    if corpus.stopped:
        raise HangLimit("the corpus run stopped")

    for stage in prof.stages():  # a profile runs its base's stages first: profiles are monotonic
        if stage.source != "machine":
            run_stage(r, stage, tick)
        elif r.results["stateful"].status != "unknown" and "stateful" not in r.first:
            _stateful(r, stage, notes, tick, prof)
    run_token_values(r)  # last, in every profile
    if r.left_out:
        notes.append(f"{r.left_out} generated workloads left out: larger than the engine holds "
                     f"({r.capabilities.limits()})")


def _confirm_corpus(r: Run, corpus: CorpusResult, by_id: dict[str, Vector]) -> None:
    """Each check's corpus failures confirmed as Run.record confirms a generated one: its failing vectors, up to
    CONFIRM_MAX, are rerun on a fresh copy until one fails there too (it becomes the check's first). When none
    does, the check's failures are process history's: they move to hygiene as [H.history] (hygiene's own
    first), and the check goes on looking in the generated stages unless CONFIRM_MAX of them were tried."""
    assert r.fresh is not None
    for check in sorted(corpus.first, key=lambda c: c != "hygiene"):  # hygiene's own failures first
        v, finding = corpus.first[check]
        confirmed = None
        for vid in corpus.failed[check][:CONFIRM_MAX]:  # the check's first finding decides whether to rerun at all
            confirmed = r.fresh.confirm(check, by_id[vid].workload, finding, f"corpus/{vid}")
            if confirmed is not None:
                corpus.first[check] = (by_id[vid], confirmed)
                break
            r.factory = r.fresh.factory or r.factory  # the spoilt copy is dropped
        if confirmed is not None:
            continue
        history = corpus.failed[check]
        del corpus.first[check]
        if check != "hygiene":
            corpus.failed[check] = []
            corpus.failed["hygiene"] += [i for i in history if i not in corpus.failed["hygiene"]]
        corpus.first.setdefault("hygiene", (v, after_history(finding)))
        for i in history:
            if corpus.lead[i].check == check:
                corpus.lead[i] = after_history(corpus.lead[i])


def _smallest_scale_failure(r: Run, check: str, first: tuple[Vector, Finding],
                            failed: list[Vector]) -> tuple[Vector, Finding]:
    """When only scale vectors fail a check, start shrinking from the smallest of them, not the first.

    Scale vectors run for up to a thousand steps with up to hundreds of requests, and
    the shrinker reruns the workload per candidate edit: the smallest is far cheaper.
    """
    if not first[0].family.startswith("scale-"):
        return first
    best = min(failed, key=lambda v: (liveness_bound(v.workload.requests) * (len(v.workload.requests) + 4),
                                      v.vector_id))
    finding = None if best is first[0] else predicate(check, r.factory, r.white_box)(best.workload)
    return first if finding is None else (best, finding)


def _stateful(r: Run, stage: Stage, notes: list[str], tick: Progress, prof: Profile) -> None:
    """Run the lockstep machine; a failure the workload driver cannot reproduce leaves the check UNKNOWN. Its runs
    stop after a few steps with requests unfinished, so they run on the second copy of the module (``apart``): what a
    submission keeps in module globals reaches no later run, as in grading, where each machine run is run to its
    end."""
    tick("stateful", 0, stage.examples)
    ran: list[tuple[Workload, int]] = []
    machine_w = run_machine(apart(r.factory), stage.examples, stage.steps, r.white_box, r.policy, ran)
    r.results["stateful"].runs += stage.examples
    if machine_w is None:
        # grade runs each of the machine's runs as a case and judges it by the workload checks within the steps the
        # machine took (machine_run.py); so does check, so what only those see (an output that differs, a call
        # judged with the whole run behind it) fails stateful in both
        for w, n in workload_runs(ran):
            finding = machine_finding(w, run_workload(w, r.factory, white_box=r.white_box), n)
            if finding is not None:
                r.record("stateful", w, finding, "stateful machine")
                return
        return
    lockstep = stateful_finding(r.factory, r.white_box)(machine_w)
    if lockstep is not None:
        r.record("stateful", machine_w, lockstep, "stateful machine")
        return
    r.results["stateful"].status = "unknown"
    larger = next((p.name for p in PROFILES.values() if p.base == prof), None)  # never the profile in force
    further = f"run with --profile {larger} to look further" if larger is not None else \
        "the same calls gave other results (do they depend on timing, or on earlier runs in the process?)"
    notes.append("stateful: the state machine failed a run that the workload driver could not reproduce, "
                 f"so the check is UNKNOWN; {further}")


def _counterexamples(r: Run, tick: Progress) -> None:
    """Shrink the first failure of each check and attach it to the check's result.

    Shrinking and the fresh-process confirmation share the ledger's allowance: once it
    is spent, the remaining counterexamples are kept as found, unconfirmed.
    """
    for check in CHECKS:
        if check not in r.first:
            continue
        w, finding, source = r.first[check]
        if check != "golden" and finding.rule != "H.history":  # a run failing only after others is kept whole
            tick(f"shrinking {check}", 0, None)
            fails = stateful_finding(r.factory, r.white_box) if check == "stateful" else \
                predicate(check, r.factory, r.white_box)
            w, finding = shrink(w, finding, _runnable_only(fails))
        r.results[check].status = "fail"
        if w.config.policy != r.policy:  # a counterexample judged by other rules would explain nothing
            raise AssertionError(f"{check}: the counterexample is under policy {w.config.policy}, the run under "
                                 f"{r.policy}: a source or the shrinker dropped the policy")
        cx = Counterexample(check, finding, w, source)
        try:
            cx.prelude, note = history_prelude(r.target, r.adapter, cx, r.white_box)
        except HangLimit:
            note = f"{check}: not confirmed in a fresh process (the submission hangs); replay may differ"
        if note is not None:
            r.notes.append(note)
        r.results[check].counterexample = cx


def _runnable_only(fails: Callable[[Workload], Finding | None]) -> Callable[[Workload], Finding | None]:
    """A shrinking predicate that skips candidates the spec cannot run in time (a budget halved below 2**53)."""
    return lambda w: fails(w) if runnable(w) else None
