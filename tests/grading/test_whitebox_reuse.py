"""The white-box judge reuses a Seq built from a row it saw before (conformance.checks.whitebox.to_state's
`made`), and finds exactly what building every Seq afresh finds.

A trace read from the sandbox keeps an unchanged row as the same dict from one snapshot to the next, so a
long run judged off the spec's path (a bug that schedules otherwise, its state still consistent) rebuilds
few sequences per call. The same sandboxed traces are judged with the reuse and with every row read
afresh, for a correct submission and some catalog bugs, on cases that leave the spec's path early and run
long (the large-number vectors) and a slice of the corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.checks import whitebox
from conformance.grading.calibrate import write_class
from conformance.grading.judge import corpus_cases, corpus_id, limits_for, run_workloads
from conformance.grading.observe import Observations
from conformance.grading.rubric import load_rubric
from conformance.sandbox.run import run_in_sandbox

BUGS = ("correct", "preempt_to_tail", "capacity_off_by_one", "blocks_by_num_tokens", "decode_not_charged")


def judged(tmp_path: Path) -> tuple[tuple[Any, ...], list[Observations]]:
    cases, runs = corpus_cases(corpus_id())
    keep = [i for i, c in enumerate(cases) if i < 60 or c.vector_id.startswith("scale-large-numbers/")][:80]
    picked = tuple(runs[i] for i in keep)
    paths = {p.stem: p for p in write_class(tmp_path)}
    out = []
    for bug in BUGS:
        result = run_in_sandbox(paths[bug], picked, limits_for(load_rubric()))
        out.append(Observations(run_workloads(picked), result.workloads))
    return tuple(cases[i] for i in keep), out


def test_reused_seqs_find_what_fresh_ones_find(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases, observed = judged(tmp_path)
    reused = [[whitebox.invariants(c.workload, o[i]) for i, c in enumerate(cases)] for o in observed]
    hits = 0
    plain = whitebox.to_state

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal hits
        made = args[4] if len(args) > 4 else kwargs.get("made")
        before = dict(made or {})
        state = plain(*args, **kwargs)
        hits += sum(1 for k, v in (made or {}).items() if before.get(k) is v)
        return state

    monkeypatch.setattr(whitebox, "to_state", counting)
    for o, want in zip(observed, reused, strict=True):
        assert [whitebox.invariants(c.workload, o[i]) for i, c in enumerate(cases)] == want
    assert hits > 1000  # rows seen before were not built again

    def fresh(config: Any, requests: Any, snap: Any, pending: Any = None, made: Any = None) -> Any:
        return plain(config, requests, snap, pending)  # every Seq built from its row

    monkeypatch.setattr(whitebox, "to_state", fresh)
    for o, want in zip(observed, reused, strict=True):
        assert [whitebox.invariants(c.workload, o[i]) for i, c in enumerate(cases)] == want
    assert any(f for per in reused for f in per)  # some bug is caught by the invariants here
