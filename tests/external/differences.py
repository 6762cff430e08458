"""What the engines' tests share about their stated differences (docs/adapters.md, "Known differences"): the
finding the suite puts first on a workload, every failing vector of the corpus put down to one difference, and a
report whose causes are the engine's differences and name no catalog bug it lacks."""

from __future__ import annotations

from typing import Any

from conformance.checks.checkers import Finding, differential, hygiene
from conformance.drivers import run_workload
from conformance.workloads.corpus import load_corpus
from spec.golden import golden_cases
from spec.model import Config
from spec.trace import Workload


def first_finding(w: Workload, factory: Any) -> Finding | None:
    """The finding the suite would put first for the workload: a raise, else the first divergence."""
    observed = run_workload(w, factory, white_box=False)
    return next(iter(hygiene(w, observed) + differential(w, observed)), None)


def explained_corpus(explain: Any, factory: Any) -> dict[str, list[str]]:
    """Each difference `explain` names (the string "None": none) with the golden cases and corpus vectors whose
    first finding it made, for every one the engine can hold."""
    vectors, _ = load_corpus()
    caps = factory(Config(4, 2, 2, 4), lambda seq_id, out: 0).capabilities
    items = [(c.name, c.workload) for c in golden_cases()] + [(v.vector_id, v.workload) for v in vectors]
    causes: dict[str, list[str]] = {}
    for name, w in items:
        f = first_finding(w, factory) if caps.holds(w) else None
        if f is not None:
            causes.setdefault(str(explain(factory, w, f)), []).append(name)
    return causes


def difference_causes(report: Any, differences: Any) -> list[str]:
    """The names of the report's causes, after checking that each is one of the engine's differences, once, that
    no catalog bug is named beyond those the differences state, and that the causes hold every failing vector."""
    causes = report.diagnosis["causes"]
    assert all(c["difference"] is not None and c["bugs"] == [] for c in causes), report.diagnosis["lines"]
    named = [c["difference"]["name"] for c in causes]
    assert len(named) == len(set(named))  # one cause each
    stated = {b for d in differences for b in d.bugs}
    assert set(report.diagnosis["matches"]) <= stated and set(report.diagnosis["consistent"]) <= stated
    assert sum(c["vectors"] for c in causes) >= report.checks["differential"].failed  # every failing vector
    return named
