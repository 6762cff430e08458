"""Sandbox observations as the conformance suite's observed traces, and the verdict of every check on one case.

The child only observes; this module turns what it reported into the suite's trace form
(conformance.drivers) and runs the same checkers as `schedcheck check` on it, in the
grader's process, so a verdict never depends on anything the submission computed about itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.checks import checkers, probes
from conformance.checks.checkers import Finding
from conformance.sandbox.child import WRONG_TYPE
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
    if r.status == "signal" and "SIGKILL" in r.cause:
        return "timeout"
    return CRASHES[r.status]


def _snapshot(s: Snapshot | None, rows: dict[int, tuple[SeqView, dict[str, Any]]]) -> dict[str, Any] | None:
    """A snapshot in the observed-trace form. A sequence's row that the child did not resend is the same
    SeqView as before (conformance.sandbox.protocol), so its dict is made once per run, kept in `rows`:
    a long run of a crowd would otherwise rebuild hundreds of unchanged rows at every call. Read-only."""
    if s is None or s.missing or None in (s.blocks_used, s.num_preemptions, s.waiting, s.running, s.finished):
        return None
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
    return {"blocks_used": s.blocks_used, "num_preemptions": s.num_preemptions, "waiting": list(s.waiting or ()),
            "running": list(s.running or ()), "finished": list(s.finished or ()), "seqs": seqs}


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
    for s in r.steps:
        assert isinstance(s, ObservedStep)
        after_s, after_u = _snapshot(s.after_schedule, rows), _snapshot(s.after_update, rows)
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


