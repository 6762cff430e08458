"""Sandbox observations as the conformance suite's observed traces, and the verdict of every check on one case.

The child only observes; this module turns what it reported into the suite's trace form
(conformance.drivers) and runs the same checkers as `schedcheck check` on it, in the
grader's process, so a verdict never depends on anything the submission computed about itself.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from conformance.checks import checkers, probes
from conformance.checks.checkers import Finding
from conformance.sandbox.child import WRONG_TYPE
from conformance.sandbox.memo import Memo, digest
from conformance.sandbox.protocol import ObservedStep, SeqView, Snapshot
from conformance.sandbox.types import WorkloadResult
from spec.golden import GoldenCase
from spec.trace import Workload, workload_to_json

HELD_OUT = "held-out"  # the tag of a case drawn from the instructor's secret seed (conformance.grading.heldout)


@dataclass(frozen=True)
class Case:
    """One corpus vector to grade on: its workload, its feature tags, its golden case if it is one."""

    vector_id: str
    workload: Workload
    tags: tuple[str, ...]
    golden: GoldenCase | None = None
    twin: int | None = None  # index of its ample-cache twin in the sandbox run (equivalence), if any
    mutated: int | None = None  # index of its run with the returned dicts cleared (fresh-dict probe), if any


CRASHES = {"exception": "crashed", "memory": "crashed", "exit": "crashed", "signal": "crashed",
           "protocol": "crashed", "load_error": "crashed", "timeout": "timeout", "cpu_limit": "timeout",
           "not_run": "timeout", "stalled": "failed", "ok": "passed", "sandbox_error": "crashed"}


def category(r: WorkloadResult) -> str:
    """How a run ended, for scoring: passed (ran to the end), failed, timeout or crashed.

    A SIGKILL comes from the hard CPU limit: a hang, like a wall-clock timeout, whichever limit fired first.
    """
    return "timeout" if r.hung else CRASHES[r.status]


def _snapshot(s: Snapshot | None, rows: dict[int, tuple[SeqView, dict[str, Any]]],
              last: dict[str, Any]) -> dict[str, Any] | None:
    """A snapshot in the observed-trace form. A sequence's row, or a queue, that the child did not resend is
    the same object as before (conformance.sandbox.protocol), so its dict or list is made once per run and
    kept in `rows` or `last`, and a snapshot whose rows are all unchanged shares the previous one's seqs
    dict: a long run of a crowd would otherwise rebuild hundreds of unchanged rows at every call. Read-only."""
    if s is None or s.missing or None in (s.blocks_used, s.num_preemptions, s.waiting, s.running, s.finished):
        return None
    if last.get("views") is not None and len(last["views"]) == len(s.seqs) and all(
            map(operator.is_, last["views"], s.seqs)):
        seqs = last["seqs"]
    else:
        seqs = {}
        for v in s.seqs:
            made = rows.get(id(v))
            if made is None:
                if None in (v.num_computed, v.num_tokens, v.num_blocks, v.status, v.output):
                    return None
                made = rows[id(v)] = (v, {"num_computed": v.num_computed, "num_tokens": v.num_tokens,
                                          "num_blocks": v.num_blocks, "status": v.status,
                                          "output": list(v.output or ())})  # the view is kept: its id stays unique
            seqs[v.seq_id] = made[1]
        last["views"], last["seqs"] = s.seqs, seqs
    queues = {}
    for name in ("waiting", "running", "finished"):
        ids = getattr(s, name)
        kept = last.get(name)
        if kept is None or kept[0] is not ids:
            kept = last[name] = (ids, list(ids))
        queues[name] = kept[1]
    return {"blocks_used": s.blocks_used, "num_preemptions": s.num_preemptions, **queues, "seqs": seqs}


def observed_trace(workload: Workload, r: WorkloadResult) -> dict[str, Any]:
    """The conformance suite's observed-trace form of a sandboxed run (conformance.drivers)."""
    rule = workload.sample
    known = {seq_id for seq_id, _ in rule.base}  # a sample call for an id the workload never added has no token

    def token(seq_id: str, k: int) -> int | None:
        return rule(seq_id, (0,) * k) if seq_id in known else None

    steps: list[dict[str, Any]] = []
    missing = None
    white_box_error = None
    rows: dict[int, tuple[SeqView, dict[str, Any]]] = {}
    made: dict[str, Any] = {}
    for s in r.steps:
        assert isinstance(s, ObservedStep)
        after_s, after_u = _snapshot(s.after_schedule, rows, made), _snapshot(s.after_update, rows, made)
        if white_box_error is None:
            white_box_error = _mistyped(s)
        if (after_s is None or after_u is None) and missing is None:
            snap = s.after_schedule or s.after_update
            missing = ", ".join(f"{a} ({why})" for a, why in snap.missing) if snap and snap.missing else "unreadable"
        steps.append({"step": s.step, "added": list(s.added), "schedule": [list(p) for p in s.schedule],
                      "after_schedule": after_s,
                      "sampled": [[i, k, token(i, k)] for i, k in s.sample_calls],
                      "finished": list(s.finished), "after_update": after_u})
    stop = {"ok": "done", "stalled": "bound"}.get(r.status, "error")
    error = None
    if stop == "error":
        e = r.error
        if category(r) == "timeout":  # the same words whichever limit (wall, CPU) fired first
            error = {"step": len(steps) + 1, "call": "run", "kind": "CallTimeout",
                     "message": "did not finish within its time limit (an endless loop, or far too slow)"}
        else:
            kind = "bad_result" if r.status == "protocol" else e.exc_type if e else r.status
            error = {"step": e.step if e else len(steps) + 1, "call": e.call if e else "run", "kind": kind,
                     "message": e.message if e and r.status != "protocol" else r.cause}
    last = steps[-1]["after_update"] if steps else None
    outputs = {k: v["output"] for k, v in last["seqs"].items()} if last and stop == "done" else None
    return {"format": "schedcheck/observed", "version": 1, "workload": workload_to_json(workload),
            "white_box": True, "note": f"white-box checks skipped: {missing}" if missing and not white_box_error
            else None, "steps": steps, "outputs": outputs, "stop": stop, "error": error,
            "white_box_error": white_box_error}


def _mistyped(s: ObservedStep) -> dict[str, Any] | None:
    """A white-box attribute that is there but not of its docs/api.md type: a finding (I6), not a missing one."""
    for call, snap in (("schedule", s.after_schedule), ("update", s.after_update)):
        for _, why in snap.missing if snap is not None else ():
            if why.startswith(WRONG_TYPE):
                return {"step": s.step, "call": call, "message": why[len(WRONG_TYPE):]}
    return None


def judge_case(case: Case, observed: dict[str, Any], twin: dict[str, Any] | None,
               mutated: dict[str, Any] | None) -> dict[str, Finding | None]:
    """The first finding of each check on one case (None: it passed)."""
    out: dict[str, Finding | None] = {}
    for name, judge in (("differential", checkers.differential), ("invariants", checkers.invariants),
                        ("liveness", checkers.liveness), ("hygiene", checkers.hygiene)):
        found = judge(case.workload, observed)
        out[name] = found[0] if found else None
    if mutated is not None and out["hygiene"] is None:
        found = probes.judge_fresh_dict(observed, mutated)
        out["hygiene"] = found[0] if found else None
    if case.golden is not None:
        found = probes.judge_golden(case.golden, observed)
        out["golden"] = found[0] if found else None
    if twin is not None:
        found = probes.judge_equivalence(case.workload, observed, twin)
        out["equivalence"] = found[0] if found else None
    return out




# Verdicts and notes by the digests of the reports they were computed from (conformance.sandbox.memo):
# a case's verdict is a function of its workload and its runs' reports, so equal digests give equal verdicts.
VERDICTS: Memo[dict[str, Finding | None]] = Memo(200_000)
NOTES: Memo[tuple[str | None]] = Memo(200_000)


def _run_key(r: WorkloadResult) -> bytes:
    return digest(r.digest, r.status.encode(), r.cause.encode())


class Traces(Protocol):
    """Observed traces by run index: a list, or Observations."""

    def __getitem__(self, index: int) -> dict[str, Any]: ...


class Observations:
    """The observed traces of one sandboxed run, each made when first asked for: most are never needed."""

    def __init__(self, runs: Sequence[Workload], results: Sequence[WorkloadResult]) -> None:
        self.runs, self.results = runs, results
        self._made: dict[int, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, index: int) -> dict[str, Any]:
        if index not in self._made:
            self._made[index] = observed_trace(self.runs[index], self.results[index])
        return self._made[index]

    def note(self, index: int) -> str | None:
        """The run's note (white-box checks skipped, and why), from the memo when its report was seen before."""
        r = self.results[index]
        if not r.digest:
            return self[index]["note"]  # type: ignore[no-any-return]
        key = _run_key(r)
        known = NOTES.get(key)
        if known is None:
            known = (self[index]["note"],)
            NOTES.put(key, known)
        return known[0]

    def judge(self, case: Case, index: int) -> dict[str, Finding | None]:
        """judge_case on the case at `index`, from the memo when every run it reads was reported before."""
        parts = [index, case.twin, case.mutated]
        runs = [self.results[i] for i in parts if i is not None]
        if not all(r.digest for r in runs):
            return self._judge(case, index)
        key = digest(case.vector_id.encode(), bytes([case.twin is None, case.mutated is None]),
                     *(_run_key(r) for r in runs))
        known = VERDICTS.get(key)
        if known is None:
            known = self._judge(case, index)
            VERDICTS.put(key, known)
        return dict(known)

    def _judge(self, case: Case, index: int) -> dict[str, Finding | None]:
        return judge_case(case, self[index], None if case.twin is None else self[case.twin],
                          None if case.mutated is None else self[case.mutated])
