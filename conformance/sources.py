"""The generated sources of workloads that a profile's stages name, and the state of one run.

A workload stage (conformance/profiles.py) is an exhaustive small scope, edge-biased or seeded
Hypothesis examples, or a reach tier (conformance/workloads/reach.py: workloads aimed at the
values of the dimension table, and groups of schedulers alive at once); the token-value cases
run last in every profile. ``stage_cases`` lists a stage's workloads without running them, for
the dimension table's measurements. Each generated workload is checked only for the checks
still without a counterexample (``Run.open_checks``).
conformance/suite.py runs the golden cases, the corpus and the lockstep machine, then shrinks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from conformance.adapters import Factory
from conformance.capabilities import DEFAULT_CAPABILITIES, Capabilities
from conformance.checks.checkers import CHECKS, Finding
from conformance.checks.fresh import Fresh
from conformance.checks.history import after_history, group_finding
from conformance.checks.workload import WORKLOAD_CHECKS, check_workload
from conformance.limits import HangLedger
from conformance.profiles import Stage
from conformance.reports.report import CheckResult
from conformance.workloads.exhaustive import small_scope
from conformance.workloads.generators import ample_num_blocks, edge_workloads, scale_workloads
from conformance.workloads.reach import Case, cases
from conformance.workloads.sentinels import sentinel_workloads
from spec.model import DEFAULT_POLICY, Policy
from spec.trace import Workload, with_policy

Progress = Callable[[str, int, int | None], None]
HANGS_EXPLORING = 3  # runs that hang before the suite stops looking for more findings


@dataclass
class Run:
    factory: Factory
    white_box: bool
    results: dict[str, CheckResult]
    first: dict[str, tuple[Workload, Finding, str]] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    first_seconds: float | None = None
    target: str = ""
    adapter: str | None = None
    notes: list[str] = field(default_factory=list)
    ledger: HangLedger = field(default_factory=lambda: HangLedger(HANGS_EXPLORING))
    complete: set[str] = field(default_factory=set)  # checks whose every source has run (the rest may stop early)
    policy: Policy = DEFAULT_POLICY  # every workload is judged under it (spec/model.py POLICIES)
    capabilities: Capabilities = DEFAULT_CAPABILITIES  # the adapter's: workloads it cannot hold are left out
    left_out: int = 0  # generated workloads left out because the engine cannot hold them
    failing: list[tuple[str, Workload, Finding]] = field(default_factory=list)  # corpus: source, workload, lead
    fresh: Fresh | None = None  # confirms each check's first failure on a freshly loaded copy (None: never)

    def record(self, check: str, workload: Workload, finding: Finding | None, source: str) -> None:
        result = self.results[check]
        result.runs += 1
        if finding is None:
            return
        if check not in self.first and self.fresh is not None:  # a first failure counts once a fresh copy fails too
            confirmed = self.fresh.confirm(check, workload, finding, source)
            if confirmed is None:
                self.put_down_to_history(workload, finding, source)
                return
            finding = confirmed
        result.failed += 1
        if check not in self.first:
            self.first[check] = (workload, finding, source)
            if self.first_seconds is None:
                self.first_seconds = time.perf_counter() - self.started

    def put_down_to_history(self, workload: Workload, finding: Finding, source: str) -> None:
        """A failure a fresh copy did not reproduce: hygiene's [H.history] (its first one, the counterexample); the
        fresh copy carries on, and the failing check goes on looking until Fresh.settled."""
        assert self.fresh is not None and self.fresh.factory is not None
        self.factory = self.fresh.factory
        hygiene = self.results["hygiene"]
        hygiene.failed += 1
        if "hygiene" not in self.first:
            self.first["hygiene"] = (workload, after_history(finding), source)
            if self.first_seconds is None:
                self.first_seconds = time.perf_counter() - self.started

    def open_checks(self) -> tuple[str, ...]:
        """Checks still without a counterexample: generated sources only run these (nor a check whose failures
        were all put down to process history, CONFIRM_MAX times)."""
        return tuple(c for c in WORKLOAD_CHECKS if c not in self.first and self.results[c].status != "skipped"
                     and not (self.fresh is not None and self.fresh.settled(c)))


def run_stage(r: Run, stage: Stage, tick: Progress) -> None:
    """Run one workload stage of a profile: an exhaustive scope or Hypothesis examples (suite.py runs the machine)."""
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
    elif stage.source == "reach" and stage.tier is not None:
        reach = cases(stage.tier)
        for i, case in enumerate(reach):
            if not r.open_checks():
                break
            if case.group:
                _check_group(r, case)
            else:
                _check_reached(r, case.workloads[0], f"reach/{case.name}")
            if i % 50 == 0:
                tick("reach", i, len(reach))


def run_token_values(r: Run) -> None:
    """Run the token-value cases: tokens through the values a scheduler might mark with."""
    for w in sentinel_workloads():
        _check_generated(r, w, f"token-values/{w.name}")


def stateful_finding(factory: Factory, white_box: bool) -> Callable[[Workload], Finding | None]:
    def fails(w: Workload) -> Finding | None:
        found = check_workload(w, factory, white_box, only=("differential", "invariants", "hygiene"),
                               extra_probes=False)
        first = next((f for f in found.values() if f is not None), None)
        return None if first is None else Finding("stateful", first.rule, first.step, first.call, first.message,
                                                  first.expected, first.actual, first.explanation)
    return fails


def _check_generated(r: Run, w: Workload, source: str) -> None:
    open_checks = r.open_checks()
    if not open_checks:
        return
    w = with_policy(w, r.policy)  # generated under the card's config; judged under the run's policy
    if not r.capabilities.holds(w):
        r.left_out += 1
        return
    found = check_workload(w, r.factory, r.white_box, only=open_checks)
    for check, finding in found.items():
        r.record(check, w, finding, source)


def _check_reached(r: Run, w: Workload, source: str) -> None:
    """A reach workload, checked as a generated one, except that the equivalence check is left out where
    the workload's cache is the ample one it compares with: its two runs would be one run made twice (a
    crowd's), and a submission that already fails runs a crowd of 2,049 to its liveness bound for nothing."""
    w = with_policy(w, r.policy)
    same = ample_num_blocks(w) == w.config.num_blocks
    open_checks = tuple(c for c in r.open_checks() if not (same and c == "equivalence"))
    if not open_checks:
        return
    if not r.capabilities.holds(w):
        r.left_out += 1
        return
    for check, finding in check_workload(w, r.factory, r.white_box, only=open_checks).items():
        r.record(check, w, finding, source)


def _check_group(r: Run, case: Case) -> None:
    """Schedulers alive at once, each with its own config, stepped call by call: each must do what it does
    alone (H.instances), so a table of instances or a class attribute shows even past the second instance."""
    if "hygiene" not in r.open_checks():
        return
    lanes = [with_policy(w, r.policy) for w in case.workloads]
    if not all(r.capabilities.holds(w) for w in lanes):
        r.left_out += len(lanes)
        return
    finding, lane = group_finding(lanes, r.factory)
    r.record("hygiene", lane, finding, f"reach/{case.name}")


@dataclass(frozen=True)
class _Drawn(Capabilities):
    """Capabilities that hold no workload, and keep each one offered: a stage's draws, without a run."""

    offered: list[Workload] = field(default_factory=list)

    def holds(self, workload: Workload) -> bool:
        self.offered.append(workload)
        return False


def _never(config: object, sample: object) -> Any:
    raise AssertionError("stage_cases runs no submission")


def stage_cases(stage: Stage) -> Iterator[Case]:
    """The cases one stage runs, in its order, without running a submission: the same enumeration, and for
    Hypothesis stages the same draws (the stage runs with capabilities that hold nothing and keep each)."""
    if stage.source == "exhaustive" and stage.scope is not None:
        yield from (Case(f"exhaustive/{i}", (w,)) for i, w in enumerate(small_scope(stage.scope)))
    elif stage.source in ("edge", "scale"):
        drawn = _Drawn()
        run_stage(Run(_never, False, {c: CheckResult() for c in CHECKS}, capabilities=drawn), stage,
                  lambda source, done, total: None)
        yield from (Case(f"{stage.source}/{i}", (w,)) for i, w in enumerate(drawn.offered))
    elif stage.source == "reach" and stage.tier is not None:
        yield from (Case(f"reach/{case.name}", case.workloads) for case in cases(stage.tier))


def _edge(r: Run, examples: int, tick: Progress) -> None:
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


def _seeded(r: Run, stage: Stage, strategy: st.SearchStrategy[Workload], source: str, tick: Progress) -> None:
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
