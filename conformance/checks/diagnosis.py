"""Differential diagnosis: which catalog bugs are consistent with ALL of a submission's findings.

A bug is consistent when its mutant (conformance/mutants/<name>.py) reproduces every
counterexample: the same check fails on the same workload with the same rule, first
divergent step, call and observed value. When several bugs fit, workloads from the
corpus and the exhaustive scope are searched for one on which their mutants behave
differently (black box); the submission is run on it and only the bugs that behave
like it are kept. When none fits, the answer is "no known bug matches", never the
nearest one. The causes (conformance/checks/causes.py) cover every failing corpus
vector as well as the counterexamples, each explained on its own."""

from __future__ import annotations

from collections.abc import Callable, Container, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any

from conformance.adapters import Factory, SpecAdapter, canonical_factory, load_module, load_target
from conformance.capabilities import DEFAULT_CAPABILITIES, Capabilities
from conformance.catalog import CATALOG, bug_named, suspects
from conformance.checks import probes
from conformance.checks.causes import MINOR, Cause, Item, by_difference, change, root_causes
from conformance.checks.checkers import Finding
from conformance.checks.history import (
    REPEAT_MAX,
    before_history,
    group_json,
    other_workload,
    prelude_json,
    repeat_json,
    run_prelude,
)
from conformance.checks.pairs import explain_in_pairs
from conformance.checks.workload import check_workload
from conformance.drivers import run_workload
from conformance.workloads.reach import group_lanes
from spec.feasible import liveness_bound
from spec.golden import case_named
from spec.model import Policy
from spec.trace import Workload, workload_to_json

MUTANTS_DIR = Path(__file__).resolve().parent.parent / "mutants"
SEARCH_LIMIT = 400  # workloads tried per round when telling candidates apart
Reproduce = Callable[[Factory, "Evidence"], Finding | None]


@dataclass(frozen=True)
class Evidence:
    """One counterexample finding to reproduce: its check, workload and where it came from."""

    check: str
    workload: Workload
    finding: Finding
    source: str = ""  # golden/<case> for golden findings


@lru_cache(maxsize=64)
def mutant_factory(name: str) -> Factory | None:
    """The canonical factory of a catalog mutant (the spec under a policy, for a policy cause), or None."""
    if name.startswith("policy:"):
        policy = Policy.parse(name.removeprefix("policy:"))
        return lambda config, sample: SpecAdapter(replace(config, policy=policy), sample)
    path = MUTANTS_DIR / f"{name}.py"
    return canonical_factory(load_module(str(path))) if path.is_file() else None


def signature(f: Finding | None) -> tuple[Any, ...] | None:
    """What must match for a mutant to reproduce a finding: rule, first divergent step, call, observed value."""
    return None if f is None else (f.check, f.rule, f.step, f.call, repr(f.actual))


def reproduce(factory: Factory, ev: Evidence, white_box: bool = True) -> Finding | None:
    """The finding of `ev.check` on `ev.workload` for `factory` (as the suite computes it), or None."""
    if ev.check == "golden":
        found = probes.golden(case_named(ev.source.removeprefix("golden/")), factory, white_box)
        return found[0] if found else None
    if ev.check == "stateful":
        got = check_workload(ev.workload, factory, white_box, only=("differential", "invariants", "hygiene"),
                             extra_probes=False)
        first = next((f for f in got.values() if f is not None), None)
        return None if first is None else Finding("stateful", first.rule, first.step, first.call, first.message,
                                                  first.expected, first.actual, first.explanation)
    return check_workload(ev.workload, factory, white_box, only=(ev.check,)).get(ev.check)


def stated_only(engine: Capabilities) -> Callable[[str], Factory | None]:
    """mutant_factory for the suspects a diagnosis of this engine may name: every one, or only the catalog bugs its
    adapter states as the engine's own differences (a cause never names a bug the engine does not have)."""
    stated = engine.stated_bugs()
    if stated is None:
        return mutant_factory
    return lambda name: mutant_factory(name) if name in stated else None


def reproducing_bugs(ev: Evidence, rerun: Reproduce, make: Callable[[str], Factory | None] = mutant_factory
                     ) -> tuple[str, ...]:
    """The suspects (catalog bugs, other policies) whose mutant reproduces this one finding exactly."""
    want = signature(ev.finding)
    out = []
    for bug in suspects(ev.workload.config.policy):
        factory = make(bug.name)
        if factory is not None and signature(rerun(factory, ev)) == want:
            out.append(bug.name)
    return tuple(out)


def black_box(w: Workload, observed: dict[str, Any]) -> tuple[Any, ...]:
    """What a black-box observer sees of a run: every call's result, the sample calls, how it ended, the outputs."""
    steps = tuple((repr(s.get("schedule")), repr([p[:2] for p in s.get("sampled", [])]), repr(s.get("finished")))
                  for s in observed["steps"][:liveness_bound(w.requests)] if "finished" in s)
    return steps + ((observed["stop"], repr(observed.get("outputs")) if observed["stop"] == "done" else None),)


WHOLE_RUNS = 3  # counterexample workloads on which a named bug's whole run must equal the submission's


def whole_runs(submission: Factory, workloads: Iterable[Workload]) -> list[tuple[Workload, tuple[Any, ...]]]:
    """What a black-box observer sees of the submission on each workload (the first WHOLE_RUNS)."""
    return [(w, black_box(w, run_workload(w, submission, white_box=False))) for w in islice(workloads, WHOLE_RUNS)]


def behaves_alike(name: str, runs: Sequence[tuple[Workload, tuple[Any, ...]]]) -> bool:
    """The bug's mutant does on each of these workloads, call by call to the end, what the submission did.

    Reproducing a finding compares the first divergence only. A submission that goes wrong there as the bug
    does and then visibly does something else (finishes at the right length, gives the blocks back a step
    late) does not have the bug, and its hint would contradict what the submission shows."""
    factory = mutant_factory(name)
    return factory is not None and all(black_box(w, run_workload(w, factory, white_box=False)) == seen
                                       for w, seen in runs)


@dataclass
class Diagnosis:
    """The catalog bugs consistent with every finding, how they were told apart, and the causes."""

    consistent: tuple[str, ...]  # before telling apart
    kept: tuple[str, ...]  # after telling apart
    separations: list[dict[str, Any]]  # per distinguishing workload: workload, kept, dropped
    causes: list[Cause]
    searched: int = 0  # workloads tried while telling candidates apart
    unlike: tuple[str, ...] = ()  # consistent at the first divergence, but their whole runs differ from it

    def lines(self) -> list[str]:
        if not self.kept and self.unlike:
            head = [f"diagnosis: no known bug matches all findings (the first difference is "
                    f"{' or '.join(self.unlike)}'s, but the run goes on differently, so its hint would not fit)"]
        elif not self.kept:
            head = ["diagnosis: no known bug matches all findings"]
        elif len(self.kept) == 1:
            bug = bug_named(self.kept[0])
            head = [f"diagnosis: behaves like {bug.name}: {bug.symptom}", f"  hint: {bug.hint}"]
        else:
            head = [f"diagnosis: {len(self.kept)} known bugs fit every finding and no searched workload "
                    f"({self.searched}) tells them apart: {', '.join(self.kept)}"]
        if self.separations:
            first = self.separations[0]["among"]
            sizes = ", ".join(str(len(s["workload"]["requests"])) for s in self.separations)
            head.append(f"  told apart {len(first)} candidates on {len(self.separations)} workloads ({sizes} "
                        "requests; each is in the JSON report's diagnosis.separations)")
        vectors = sum(c.vectors for c in self.causes)
        over = f", over {vectors} failing corpus vectors and the counterexamples" if vectors else ""
        head.append(f"causes: {len(self.causes)}{over} (a cause: the findings one known bug, or two together, "
                    "explain, or a difference the engine states, or one kind of divergence none explains)")
        major = [c for c in self.causes if c.findings or len(c.items) > MINOR]
        head += [f"  {i}. {c.line()}" for i, c in enumerate(major, start=1)]
        minor = [c for c in self.causes if c not in major]
        if minor:
            head.append(f"  {len(major) + 1}-{len(self.causes)}. " if len(minor) > 1 else f"  {len(self.causes)}. ")
            head[-1] += "; ".join(f"{c.name()} ({len(c.items)} corpus "
                                  f"vector{'s' * (len(c.items) != 1)})" for c in minor) + \
                " (each fits too few vectors to tell from chance; the JSON report has them)"
        return head

    def to_json(self) -> dict[str, Any]:
        return {"consistent": list(self.consistent), "matches": list(self.kept), "unlike": list(self.unlike),
                "searched": self.searched,
                "separations": self.separations, "causes": [c.to_json() for c in self.causes],
                "lines": self.lines()}


def same_checks_fail(candidates: tuple[str, ...], submission: Factory,
                     evidence: list[Evidence]) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """Keep the candidates that fail exactly the submission's checks on each counterexample's workload: one that
    also fails a check the submission passes there (a probe black-box runs never make) is not the cause."""
    kept, separations = candidates, []
    for ev in evidence:
        if len(kept) < 2:
            break
        mine = _failing(submission, ev.workload)
        now = tuple(name for name in kept if _failing(_factory(name), ev.workload) == mine)
        if now != kept and now:
            separations.append({"workload": workload_to_json(ev.workload), "source": f"the {ev.check} counterexample",
                                "among": list(kept), "kept": list(now), "dropped": [n for n in kept if n not in now]})
            kept = now
    return kept, separations


def tell_apart(candidates: tuple[str, ...], submission: Factory, workloads: Iterable[tuple[str, Workload]],
               limit: int = SEARCH_LIMIT) -> tuple[tuple[str, ...], list[dict[str, Any]], int]:
    """Search workloads on which the candidates' mutants differ; keep those that behave like the submission."""
    kept, separations, searched = candidates, [], 0
    for source, w in islice(workloads, limit):
        if len(kept) < 2:
            break
        searched += 1
        seen = {name: black_box(w, run_workload(w, _factory(name), white_box=False)) for name in kept}
        if len(set(seen.values())) < 2:
            continue
        mine = black_box(w, run_workload(w, submission, white_box=False))
        now = tuple(name for name in kept if seen[name] == mine)
        separations.append({"workload": workload_to_json(w), "source": source, "among": list(kept),
                            "kept": list(now), "dropped": [n for n in kept if n not in now]})
        kept = now
    return kept, separations, searched


def _failing(factory: Factory, w: Workload) -> frozenset[str]:
    return frozenset(c for c, f in check_workload(w, factory, False).items() if f is not None)


def _factory(name: str) -> Factory:
    factory = mutant_factory(name)
    assert factory is not None, f"mutant {name} vanished"
    return factory


def search_space(holds: Callable[[Workload], bool] = lambda w: True,
                 hung: Container[Hashable] = frozenset()) -> Iterator[tuple[str, Workload]]:
    """Workloads to tell candidates apart: the frozen corpus, then the small exhaustive scope (those the
    target can hold: `holds` is its adapter's Capabilities.holds), less those it `hung` on."""
    from conformance.workloads.corpus import load_corpus
    from conformance.workloads.exhaustive import SMALL, small_scope

    vectors, _ = load_corpus()
    for v in vectors:
        if holds(v.workload) and v.workload not in hung:
            yield f"corpus/{v.vector_id}", v.workload
    for w in small_scope(SMALL):
        if w not in hung:
            yield "exhaustive", w


def diagnose(evidence: list[Evidence], submission: Factory | None, rerun: Reproduce,
             corpus: Sequence[tuple[str, Workload, Finding]] = (), white_box: bool = True,
             totals: dict[str, int] | None = None, hung: Container[Hashable] = frozenset(),
             engine: Capabilities = DEFAULT_CAPABILITIES) -> Diagnosis:
    """Diagnose a set of findings; with the submission's factory, tell several candidates apart.

    The causes cover the counterexamples and `corpus`, every failing corpus vector's earliest finding
    (conformance/checks/causes.py); `totals` is the corpus's vectors per feature. The submission is
    never run on a workload it `hung` on, nor searched on one its `engine` cannot hold. An engine that states
    its known differences gets them as causes, and only the catalog bugs they state as suspects."""
    holds = engine.holds
    make = stated_only(engine)
    bugs_of = [reproducing_bugs(ev, rerun, make) for ev in evidence]
    named = [b for b in (suspects(evidence[0].workload.config.policy) if evidence else CATALOG)
             if make(b.name) is not None]
    consistent = tuple(b.name for b in named if all(b.name in bugs for bugs in bugs_of)) if evidence else ()
    separations: list[dict[str, Any]] = []
    kept, searched = consistent, 0
    if len(consistent) > 1 and submission is not None:
        kept, separations = same_checks_fail(consistent, submission, evidence)
        kept, more, searched = tell_apart(kept, submission, search_space(holds, hung))
        separations += more
    unlike: tuple[str, ...] = ()
    if kept and submission is not None:  # named only if it also does what the submission did after that
        runs = whole_runs(submission, (ev.workload for ev in evidence))
        alike = tuple(name for name in kept if behaves_alike(name, runs))
        kept, unlike = alike, tuple(name for name in kept if name not in alike)
    items = [Item(ev.source or ev.check, ev.workload, ev.finding, True) for ev in evidence] + \
        [Item(source, w, f) for source, w, f in corpus]

    def rerun_item(factory: Factory, item: Item) -> Finding | None:
        return rerun(factory, Evidence(item.check, item.workload, item.finding, item.source))
    causes, items = by_difference(items, engine, submission) if submission is not None else ([], items)
    causes += root_causes(items, white_box, rerun_item, make, totals, explain_in_pairs) if items else []
    causes.sort(key=lambda c: (not c.findings, -len(c.items)))  # stable: root_causes' order among equals
    for c in causes:
        if kept and c.bugs and set(kept) <= set(c.bugs):  # a cause no bug explains is never renamed
            c.bugs, c.also = kept, ()  # reproduced exactly and told apart: what else fits a first step is moot
        elif len(c.bugs) > 1 and submission is not None:  # one cause of several: tell its candidates apart
            narrowed, more, n = tell_apart(c.bugs, submission, search_space(holds, hung))
            c.bugs = narrowed or c.bugs  # the other causes may hide it on every separating workload
            separations += more
            searched += n
        if unlike and c.bugs and set(c.bugs) <= set(unlike):  # its whole runs differ from the submission's
            f = c.items[0].finding
            c.near = tuple((name, len(c.items)) for name in c.bugs) + c.near
            c.bugs, c.also, c.what = (), (), change(f) + ("" if f.rule in change(f) else f" [{f.rule}]")
    return Diagnosis(consistent, kept, separations, causes, searched, unlike)


def diagnose_report(report: Any, factory: Factory, corpus: Sequence[tuple[str, Workload, Finding]] = (),
                    engine: Capabilities = DEFAULT_CAPABILITIES,
                    hung: Container[Hashable] = frozenset()) -> Diagnosis | None:
    """The diagnosis of a conformance report's counterexamples and failing corpus vectors (conformance.suite.run).

    Findings on workloads the submission `hung` on are left out, since telling bugs apart
    reruns the submission (hung_sources names them); None when no counterexample is left.
    """
    evidence = [Evidence(cx.check, cx.workload, cx.finding, cx.source) for cx in report.counterexamples
                if cx.workload not in hung]
    if not evidence:
        return None
    white_box = bool(report.white_box)
    totals = {t: row["pass"] + row["fail"] for t, row in report.features.items()}
    corpus = [(source, w, f) for source, w, f in corpus if w not in hung]
    return diagnose(evidence, factory, lambda f, ev: reproduce(f, ev, white_box), corpus, white_box, totals, hung,
                    engine)


def hung_sources(report: Any, corpus: Sequence[tuple[str, Workload, Finding]],
                 hung: Container[Hashable]) -> list[str]:
    """Where the findings that diagnose_report leaves out come from, once each: corpus/<family>/<name>, golden/<case>,
    or which counterexample it is and its source (edge-biased, stateful machine, ...)."""
    sources = [cx.source if cx.source.startswith(("corpus/", "golden/")) else f"the {cx.check} counterexample "
               f"({cx.source})" for cx in report.counterexamples if cx.workload in hung]
    sources += [source for source, w, _ in corpus if w in hung]
    return list(dict.fromkeys(sources))


def diagnosis_lines(diagnosis: dict[str, Any]) -> list[str]:
    """The terminal lines of a report's diagnosis (the same lines the JSON report carries)."""
    lines: list[str] = diagnosis["lines"]
    return lines


def history_prelude(target: str, adapter: str | None, cx: Any,
                    white_box: bool) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The history a counterexample needs to reproduce as `schedcheck replay` runs it, and a note if unknown.

    H.instances findings carry their second instance. Any other finding is rerun on a
    newly executed copy of the target file (fresh module state; replay probes white-box
    access on a copy of its own, as check does); if it does not reproduce there, one
    earlier run of the same workload is tried as a prelude ([H.history]: of the check it failed).
    """

    lanes = group_lanes(cx.source, cx.workload.config.policy)
    if lanes and cx.finding.rule in ("H.instances", "H.history"):  # schedulers alive at once: all of them again
        return group_json(lanes), None
    if cx.finding.rule == "H.instances":
        return prelude_json("interleaved", [other_workload(cx.workload)]), None
    if adapter is not None or not target.endswith(".py"):
        return None, None  # not reloadable in-process: modules and adapters keep their state
    if cx.finding.rule == "H.history":  # passes fresh by definition: the history it needs is what is looked for
        finding = before_history(cx.finding)
        ev = Evidence(finding.check, cx.workload, finding, cx.source)
        for prelude in ([cx.workload], [cx.workload] * 2):  # the same failure after the fewest earlier runs
            fresh = load_target(target)
            run_prelude(prelude, fresh)
            again = reproduce(fresh, ev, white_box)
            if again is not None and again.rule == finding.rule:
                return prelude_json("before", prelude), None
        fresh = load_target(target)  # no fixed count (an address reused): as replay will, run it until it fails
        for _ in range(REPEAT_MAX):
            again = reproduce(fresh, ev, white_box)
            if again is not None and again.rule == finding.rule:
                return repeat_json(), None
        return None, (f"hygiene [H.history]: the run fails only after earlier runs in this process, and not within "
                      f"{REPEAT_MAX} runs of the same workload in a new one; its trace replays as a pass")
    ev = Evidence(cx.check, cx.workload, cx.finding, cx.source)
    want = signature(cx.finding)
    for prelude in ([], [cx.workload]):
        fresh = load_target(target)
        run_prelude(prelude, fresh)
        if signature(reproduce(fresh, ev, white_box)) == want:
            return (prelude_json("before", prelude) if prelude else None), None
    return None, (f"{cx.check}: the counterexample depends on earlier runs in this process and did not reproduce "
                  "on a freshly loaded copy of the submission; replay in a new process may pass")
