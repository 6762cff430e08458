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
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from conformance.adapters import Factory, load_target
from conformance.checks import probes
from conformance.checks.checkers import CHECKS, Finding
from conformance.checks.diagnosis import diagnose_report, history_prelude
from conformance.checks.machine import run_machine
from conformance.checks.shrink import shrink
from conformance.checks.workload import WORKLOAD_CHECKS, check_workload, predicate, probe_white_box
from conformance.drivers import runnable
from conformance.limits import HangLedger, HangLimit, hang_ledger
from conformance.profiles import PROFILES, Profile, Stage
from conformance.reports.report import CheckResult, Counterexample, Report
from conformance.workloads.corpus import Vector, features, load_corpus, run_corpus
from conformance.workloads.exhaustive import small_scope
from conformance.workloads.generators import edge_workloads, scale_workloads
from conformance.workloads.sentinels import sentinel_workloads
from spec.golden import golden_cases
from spec.trace import Workload, liveness_bound

Progress = Callable[[str, int, int | None], None]
HANGS_EXPLORING = 3  # runs that hang before the suite stops looking for more findings
HANGS_SHRINKING = 6  # ... and, after that, while it shrinks and confirms the counterexamples it has


@dataclass
class _Run:
    factory: Factory
    white_box: bool
    results: dict[str, CheckResult]
    first: dict[str, tuple[Workload, Finding, str]] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    first_seconds: float | None = None
    failed_features: dict[str, set[str]] = field(default_factory=dict)  # check -> features of failing vectors
    target: str = ""
    adapter: str | None = None
    notes: list[str] = field(default_factory=list)
    ledger: HangLedger = field(default_factory=lambda: HangLedger(HANGS_EXPLORING))
    complete: set[str] = field(default_factory=set)  # checks whose every source has run (the rest may stop early)

    def record(self, check: str, workload: Workload, finding: Finding | None, source: str) -> None:
        result = self.results[check]
        result.runs += 1
        if finding is None:
            return
        result.failed += 1
        if check not in self.first:
            self.first[check] = (workload, finding, source)
            if self.first_seconds is None:
                self.first_seconds = time.perf_counter() - self.started

    def open_checks(self) -> tuple[str, ...]:
        """Checks still without a counterexample: generated sources only run these."""
        return tuple(c for c in WORKLOAD_CHECKS if c not in self.first and self.results[c].status != "skipped")


_probe_white_box = probe_white_box  # the name replay and older callers use


def run(target: str, profile: str | Profile = "quick", adapter: str | None = None, white_box: bool = True,
        families: Iterable[str] | None = None, progress: Progress | None = None, diagnose: bool = True) -> Report:
    """Check `target` (a path, a dotted module, 'spec' or 'impl'); raise LoadError if it cannot be loaded.

    A fault in the suite itself gives verdict ERROR with its traceback, never PASS:
    the submission's own exceptions are caught by the drivers and become findings.
    """
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    factory = load_target(target, adapter)
    results = {c: CheckResult() for c in CHECKS}
    report = Report(target, adapter, prof, white_box, results, {}, [], 0)
    started = time.perf_counter()
    try:
        with hang_ledger(HANGS_EXPLORING) as ledger:
            tick = progress or (lambda stage, done, total: None)
            r = _Run(factory, white_box, results, target=target, adapter=adapter, notes=report.notes, ledger=ledger)
            stopped = _explore(report, r, prof, families, tick)
            ledger.allow(HANGS_SHRINKING)
            _counterexamples(r, tick)
            for check in CHECKS:
                if results[check].status == "pending":
                    results[check].status = "unknown" if stopped and check not in r.complete else "pass"
            if diagnose and report.counterexamples:
                _diagnose(report, r, stopped)
    except Exception:  # the suite's own fault: report it, never let it pass
        report.error = traceback.format_exc()
        for c in results.values():
            c.status = "unknown" if c.status == "pending" else c.status
    report.timings = {"total": time.perf_counter() - started, "first_finding": r.first_seconds}
    return report


def _diagnose(report: Report, r: _Run, stopped: bool) -> None:
    """Name the known bugs consistent with the findings; not for a submission that hangs (it would run it more)."""
    try:
        if not stopped:
            report.diagnosis = diagnose_report(report, r.factory, r.failed_features).to_json()
            return
    except HangLimit:
        pass
    report.notes.append("diagnosis skipped: telling known bugs apart would run a submission that hangs; "
                        "fix the hang first")


def _explore(report: Report, r: _Run, prof: Profile, families: Iterable[str] | None, tick: Progress) -> bool:
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


def _run_checks(report: Report, r: _Run, prof: Profile, families: Iterable[str] | None, tick: Progress) -> None:
    factory, results, notes = r.factory, report.checks, report.notes
    note = _probe_white_box(factory) if r.white_box else "white-box checks skipped: --black-box"
    if note is not None:
        notes.append(note)
        r.white_box = report.white_box = False
        results["invariants"].status = "skipped"
    white_box = r.white_box

    cases = golden_cases()
    for i, case in enumerate(cases):
        found = probes.golden(case, factory, white_box)
        r.record("golden", case.workload, found[0] if found else None, f"golden/{case.name}")
        tick("golden", i + 1, len(cases))
    r.complete.add("golden")

    vectors, corpus_notes = load_corpus(families=families)
    report.vectors = len(vectors)
    corpus_start = time.perf_counter() - r.started
    notes += corpus_notes
    checks = tuple(c for c in WORKLOAD_CHECKS if results[c].status != "skipped")
    corpus = run_corpus(vectors, factory, white_box, checks, lambda i: tick("corpus", i, len(vectors)))
    report.features = corpus.features
    by_id = {v.vector_id: v for v in vectors}
    r.failed_features = {c: {t for i in corpus.failed[c] for t in by_id[i].workload.tags or features(by_id[i].workload)}
                         for c in checks}
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
        _generated(r, stage, notes, tick)
    for w in sentinel_workloads():  # last, in every profile: tokens through the values a scheduler might mark with
        _check_generated(r, w, f"token-values/{w.name}")


def _smallest_scale_failure(r: _Run, check: str, first: tuple[Vector, Finding],
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


def _generated(r: _Run, stage: Stage, notes: list[str], tick: Progress) -> None:
    """Run one stage of a profile: an exhaustive scope, Hypothesis examples, or machine runs."""
    if stage.source == "exhaustive" and stage.scope is not None and r.open_checks():
        for i, w in enumerate(small_scope(stage.scope)):
            _check_generated(r, w, "exhaustive")
            if i % 200 == 0:
                tick("exhaustive", i, None)
    elif stage.source in ("edge", "scale") and r.open_checks():
        strategy, source = (edge_workloads(), "edge-biased") if stage.source == "edge" else (scale_workloads(), "scale")
        if stage.seed is None and stage.source == "edge":
            _edge(r, stage.examples, tick)
        else:
            _seeded(r, stage, strategy, source, tick)
    elif stage.source == "machine" and r.results["stateful"].status != "unknown" and "stateful" not in r.first:
        _stateful(r, stage, notes, tick)


def _stateful(r: _Run, stage: Stage, notes: list[str], tick: Progress) -> None:
    """Run the lockstep machine; a failure the workload driver cannot reproduce leaves the check UNKNOWN."""
    tick("stateful", 0, stage.examples)
    machine_w = run_machine(r.factory, stage.examples, stage.steps, r.white_box)
    r.results["stateful"].runs += stage.examples
    if machine_w is None:
        return
    machine_finding = _stateful_finding(r.factory, r.white_box)(machine_w)
    if machine_finding is not None:
        r.record("stateful", machine_w, machine_finding, "stateful machine")
    else:
        r.results["stateful"].status = "unknown"
        notes.append("stateful: the state machine failed a run that the workload driver could not reproduce, "
                     "so the check is UNKNOWN; run with --profile default to look further")


def _counterexamples(r: _Run, tick: Progress) -> None:
    """Shrink the first failure of each check and attach it to the check's result.

    Shrinking and the fresh-process confirmation share the ledger's allowance: once it
    is spent, the remaining counterexamples are kept as found, unconfirmed.
    """
    for check in CHECKS:
        if check not in r.first:
            continue
        w, finding, source = r.first[check]
        if check != "golden":
            tick(f"shrinking {check}", 0, None)
            fails = _stateful_finding(r.factory, r.white_box) if check == "stateful" else \
                predicate(check, r.factory, r.white_box)
            w, finding = shrink(w, finding, _runnable_only(fails))
        r.results[check].status = "fail"
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


def _stateful_finding(factory: Factory, white_box: bool) -> Callable[[Workload], Finding | None]:
    def fails(w: Workload) -> Finding | None:
        found = check_workload(w, factory, white_box, only=("differential", "invariants", "hygiene"),
                               extra_probes=False)
        first = next((f for f in found.values() if f is not None), None)
        return None if first is None else Finding("stateful", first.rule, first.step, first.call, first.message,
                                                  first.expected, first.actual, first.explanation)
    return fails


def _check_generated(r: _Run, w: Workload, source: str) -> None:
    open_checks = r.open_checks()
    if not open_checks:
        return
    found = check_workload(w, r.factory, r.white_box, only=open_checks)
    for check, finding in found.items():
        r.record(check, w, finding, source)


def _edge(r: _Run, examples: int, tick: Progress) -> None:
    """Run the edge-biased Hypothesis examples (derandomized; Hypothesis's shrinker is not used).

    Its text is the seed: Hypothesis derives a derandomized run's seed from the test's source.
    """
    count = [0]

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck), print_blob=False)
    @given(edge_workloads())
    def edge(w: Workload) -> None:
        _check_generated(r, w, "edge-biased")
        count[0] += 1
        if count[0] % 20 == 0:
            tick("edge-biased", count[0], examples)

    edge()


def _seeded(r: _Run, stage: Stage, strategy: st.SearchStrategy[Workload], source: str, tick: Progress) -> None:
    """Run `stage.examples` Hypothesis examples of `strategy` from `stage.seed` (no shrinking, no database)."""
    count = [0]

    @seed(stage.seed or 0)
    @settings(max_examples=stage.examples, database=None, deadline=None, phases=(Phase.explicit, Phase.generate),
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(strategy)
    def draw(w: Workload) -> None:
        _check_generated(r, w, source)
        count[0] += 1
        if count[0] % 20 == 0:
            tick(source, count[0], stage.examples)

    draw()
