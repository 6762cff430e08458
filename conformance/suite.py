"""The whole conformance run: ``run(target, profile) -> Report``.

Sources of workloads, in order: the card's golden cases, the frozen corpus, the
bounded-exhaustive scope of the profile, edge-biased Hypothesis examples, and the
lockstep state machine. The first failure of each check is shrunk to the fewest
requests and steps. Everything is deterministic; timings are kept out of the JSON.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, given, settings

from conformance.adapters import Factory, load_target
from conformance.checks import probes
from conformance.checks.checkers import CHECKS, Finding
from conformance.checks.machine import run_machine
from conformance.checks.shrink import shrink
from conformance.checks.workload import WORKLOAD_CHECKS, check_workload, predicate
from conformance.drivers import run_workload
from conformance.profiles import PROFILES, Profile
from conformance.reports.report import CheckResult, Counterexample, Report
from conformance.workloads.corpus import load_corpus, run_corpus
from conformance.workloads.exhaustive import small_scope
from conformance.workloads.generators import edge_workloads
from spec.golden import golden_cases
from spec.model import Config
from spec.trace import Request, Workload, make_workload

Progress = Callable[[str, int, int | None], None]


@dataclass
class _Run:
    factory: Factory
    white_box: bool
    results: dict[str, CheckResult]
    first: dict[str, tuple[Workload, Finding, str]] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    first_seconds: float | None = None

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


def _probe_white_box(factory: Factory) -> str | None:
    """A note when the target gives no white-box access (the invariants check is then skipped)."""
    w = make_workload(Config(4, 2, 2, 4), [Request("a1", 2, 1)])
    observed = run_workload(w, factory, white_box=True)
    return observed["note"] if observed["error"] is None else None


def run(target: str, profile: str | Profile = "quick", adapter: str | None = None, white_box: bool = True,
        families: Iterable[str] | None = None, progress: Progress | None = None) -> Report:
    """Check `target` (a path, a dotted module, 'spec' or 'impl'); raise LoadError if it cannot be loaded."""
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    factory = load_target(target, adapter)
    notes: list[str] = []
    note = _probe_white_box(factory) if white_box else "white-box checks skipped: --black-box"
    if note is not None:
        notes.append(note)
        white_box = False
    results = {c: CheckResult() for c in CHECKS}
    if not white_box:
        results["invariants"].status = "skipped"
    r = _Run(factory, white_box, results)
    tick = progress or (lambda stage, done, total: None)

    cases = golden_cases()
    for i, case in enumerate(cases):
        found = probes.golden(case, factory, white_box)
        r.record("golden", case.workload, found[0] if found else None, f"golden/{case.name}")
        tick("golden", i + 1, len(cases))

    vectors, corpus_notes = load_corpus(families=families)
    corpus_start = time.perf_counter() - r.started
    notes += corpus_notes
    checks = tuple(c for c in WORKLOAD_CHECKS if results[c].status != "skipped")
    corpus = run_corpus(vectors, factory, white_box, checks, lambda i: tick("corpus", i, len(vectors)))
    by_id = {v.vector_id: v for v in vectors}
    for check in checks:
        results[check].runs += corpus.runs[check]
        results[check].failed += len(corpus.failed[check])
        if check in corpus.first:
            v, finding = corpus.first[check]
            r.first[check] = (by_id[v.vector_id].workload, finding, f"corpus/{v.vector_id}")
    if r.first_seconds is None and corpus.seconds_to_first is not None:
        r.first_seconds = corpus_start + corpus.seconds_to_first

    if prof.scope is not None:
        for i, w in enumerate(small_scope(prof.scope)):
            _check_generated(r, w, "exhaustive")
            if i % 200 == 0:
                tick("exhaustive", i, None)
    _edge(r, prof.edge_examples, tick)
    tick("stateful", 0, prof.machine_examples)
    machine_w = run_machine(factory, prof.machine_examples, prof.machine_steps, white_box)
    results["stateful"].runs = prof.machine_examples
    if machine_w is not None:
        machine_finding = _stateful_finding(factory, white_box)(machine_w)
        if machine_finding is not None:
            r.record("stateful", machine_w, machine_finding, "stateful machine")
        else:
            notes.append("the state machine failed a run that the workload driver could not reproduce")

    counterexamples: list[Counterexample] = []
    for check in CHECKS:
        if check not in r.first:
            continue
        w, finding, source = r.first[check]
        if check != "golden":
            tick(f"shrinking {check}", 0, None)
            fails = _stateful_finding(factory, white_box) if check == "stateful" else predicate(check, factory,
                                                                                                   white_box)
            w, finding = shrink(w, finding, fails)
        results[check].status = "fail"
        cx = Counterexample(check, finding, w, source)
        results[check].counterexample = cx
        counterexamples.append(cx)
    for check in CHECKS:
        if results[check].status == "pending":
            results[check].status = "pass"
    timings = {"total": time.perf_counter() - r.started, "first_finding": r.first_seconds}
    return Report(target, adapter, prof, white_box, results, corpus.features, notes, len(vectors), timings)


def _stateful_finding(factory: Factory, white_box: bool) -> Callable[[Workload], Finding | None]:
    def fails(w: Workload) -> Finding | None:
        try:
            found = check_workload(w, factory, white_box, only=("differential", "invariants", "hygiene"),
                                   extra_probes=False)
        except Exception:
            return None
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
    """Run the edge-biased Hypothesis examples (derandomized; Hypothesis's shrinker is not used)."""
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
