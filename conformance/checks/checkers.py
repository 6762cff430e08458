"""Checkers: pure functions (workload, observed trace) -> findings, each with a check and a rule id.

Black-box first: ``differential`` compares every schedule(), every sample_fn call,
every finished list and the final outputs with the spec, and names the first
divergence with the rule the spec applied there. The invariants (I1..I6, on white-box
snapshots) are conformance.checks.whitebox, which builds on this module. ``liveness`` and
``hygiene`` judge the run's shape; the multi-run checks (equivalence, fresh dict, two
instances) are in ``conformance.checks.probes``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from spec.feasible import liveness_bound
from spec.model import Event
from spec.trace import Trace, Workload, run_workload

CHECKS = ("golden", "differential", "invariants", "equivalence", "liveness", "hygiene", "stateful")
WHITE_BOX_CHECKS = ("invariants",)


@dataclass(frozen=True)
class Finding:
    """One failure: where it first shows, what the spec expected, what the submission did, and why."""

    check: str  # one of CHECKS
    rule: str  # the spec's rule id (P2.stop, U.finish, I4, OUT, L.bound, H.raised, ...)
    step: int  # the step of the first divergence (1-based); 0 before any step
    call: str  # "schedule", "update", "outputs", "add", ...
    message: str  # one line: what happened, with values
    expected: Any = None  # JSON
    actual: Any = None  # JSON
    explanation: tuple[str, ...] = field(default=())  # the spec's events at that step

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "rule": self.rule, "step": self.step, "call": self.call,
                "message": self.message, "expected": self.expected, "actual": self.actual,
                "explanation": list(self.explanation)}


@functools.lru_cache(maxsize=4096)
def expected_trace(workload: Workload) -> Trace:
    """The spec's run of the workload (cached: workloads are frozen values)."""
    return run_workload(workload)


def _explain(events: tuple[Event, ...]) -> tuple[str, ...]:
    return tuple(f"{e.rule}: {e.message}" for e in events)


def blame(events: tuple[Event, ...], seq_ids: list[str], default: str) -> str:
    """The rule behind a divergence: the spec's last decision about the first differing sequence.

    A sequence that fit only after preempting another is blamed on P1.preempt, the
    decision that made room; with no decision about it, a step-wide stop or cut-off.
    """
    for seq_id in seq_ids:
        about = [e.rule for e in events if e.seq_id == seq_id]
        if about:
            return "P1.preempt" if about[-1] == "P1" and "P1.preempt" in about else about[-1]
    for rule in ("P2.stop", "P2.full", "P1.budget"):
        if any(e.rule == rule for e in events):
            return rule
    return default


SHOWN = 8  # a batch of more entries is shown by its count and the entries around where it differs


def _fmt(batch: list[list[Any]] | None, at: int = 0) -> str:
    """A batch as `{id: n, ...}`; a long one (a crowd's, 4,097 entries) by a few entries from `at` and its count."""
    pairs = batch or []
    if len(pairs) <= SHOWN:
        return "{" + ", ".join(f"{k}: {n}" for k, n in pairs) + "}"
    start = max(0, min(at - 1, len(pairs) - SHOWN // 2))
    shown = ", ".join(f"{k}: {n}" for k, n in pairs[start:start + SHOWN // 2])
    return f"{{{'..., ' if start else ''}{shown}, ...}} ({len(pairs)} entries; entry {start + 1} on shown)"


def differential(workload: Workload, observed: dict[str, Any]) -> list[Finding]:
    """Compare the run with the spec call by call; return the first divergence, if any."""
    trace = expected_trace(workload)
    got_steps = observed["steps"]
    for i, want in enumerate(trace.steps):
        k = i + 1
        sched_events = tuple(e for e in want.events if e.rule.startswith("P"))
        explain = _explain(want.events)
        exp_batch = [[s, n] for s, n in want.batch]
        if i >= len(got_steps) or "schedule" not in got_steps[i]:
            if observed["stop"] == "error":
                return []  # the exception is hygiene's finding; nothing after it can be compared
            return [Finding("differential", blame(sched_events, [], "P1"), k, "schedule",
                            f"step {k}: the submission stopped (it reported every request finished), the spec "
                            f"schedules {_fmt(exp_batch)}", exp_batch, None, explain)]
        got = got_steps[i]
        if got["schedule"] is None:  # not a dict of ints: the driver stopped the run, hygiene names the shape
            return []
        if got["schedule"] != exp_batch:
            pos = next((j for j, (a, b) in enumerate(zip(exp_batch, got["schedule"], strict=False)) if a != b),
                       min(len(exp_batch), len(got["schedule"])))
            ids = [p[0] for p in exp_batch[pos:pos + 1] + got["schedule"][pos:pos + 1]]
            return [Finding("differential", blame(sched_events, ids, "P1"), k, "schedule",
                            f"step {k}: schedule() returned {_fmt(got['schedule'], pos)}, the spec returns "
                            f"{_fmt(exp_batch, pos)}", exp_batch, got["schedule"], explain)]
        if "sampled" not in got:
            return []
        exp_sampled = [[s, tok] for s, tok in want.sampled]
        got_sampled = [[s, tok] for s, _, tok in got["sampled"]]
        if got_sampled != exp_sampled:
            differ = {p[0] for p in exp_sampled + got_sampled} - {p[0] for p in exp_sampled if p in got_sampled}
            partial = any(e.rule == "U.partial" and e.seq_id in differ for e in want.events)
            rule = "U.partial" if partial else "U.sample"
            return [Finding("differential", rule, k, "update",
                            f"step {k}: update() made sample_fn calls (seq_id, token) {got_sampled}, the spec makes "
                            f"{exp_sampled}", exp_sampled, got_sampled, explain)]
        if "finished" in got and got["finished"] != list(want.finished):
            return [Finding("differential", "U.finish", k, "update",
                            f"step {k}: update() returned {got['finished']}, the spec finishes {list(want.finished)}",
                            list(want.finished), got["finished"], explain)]
    if len(got_steps) > len(trace.steps):
        k = len(trace.steps) + 1
        return [Finding("differential", "U.finish", k, "schedule",
                        f"step {k}: the spec has finished every request, the submission still schedules "
                        f"{_fmt(got_steps[len(trace.steps)].get('schedule'))}", None,
                        got_steps[len(trace.steps)].get("schedule"), ())]
    outputs = observed.get("outputs")
    if outputs is not None and observed["stop"] == "done":
        for seq_id, want_out in sorted(trace.outputs().items()):
            if outputs.get(seq_id) != list(want_out):
                last = len(trace.steps)
                return [Finding("differential", "U.finish", last, "outputs",
                                f"{seq_id}.output is {outputs.get(seq_id)} at the end, the spec's is {list(want_out)}",
                                list(want_out), outputs.get(seq_id), ())]
    return []


# --- liveness and hygiene ---------------------------------------------------------------------


def liveness(workload: Workload, observed: dict[str, Any]) -> list[Finding]:
    """A feasible workload makes progress every step with work and ends within the derived bound."""
    arrived: set[str] = set()
    done: set[str] = set()
    for got in observed["steps"]:
        arrived.update(got["added"])
        if got.get("schedule") == [] and arrived - done:
            left = sorted(arrived - done)
            return [Finding("liveness", "L.progress", got["step"], "schedule",
                            f"step {got['step']}: schedule() returned {{}} while {left} are unfinished; a feasible "
                            "workload always has a sequence that can run", None, [])]
        done.update(got.get("finished", []))
    if observed["stop"] == "bound":
        bound = liveness_bound(workload.requests)
        left = sorted({r.seq_id for r in workload.requests} - done)
        return [Finding("liveness", "L.bound", bound + 1, "schedule",
                        f"{left} still unfinished after {bound} steps, the most a feasible workload can take "
                        f"under policy {workload.config.policy} (spec/feasible.py liveness_bound, proved by the LIVE "
                        "claim)", bound, None)]
    return []


def hygiene(workload: Workload, observed: dict[str, Any]) -> list[Finding]:
    """Exceptions, malformed results, unknown ids and n <= 0: each a finding, never a crash."""
    err = observed.get("error")
    if err is not None:
        rule = {"bad_result": "H.result_type", "CallTimeout": "H.timeout"}.get(err["kind"], "H.raised")
        what = err["message"] if err["kind"] in ("bad_result", "CallTimeout") else f"{err['kind']}: {err['message']}"
        return [Finding("hygiene", rule, err["step"], err["call"], f"step {err['step']}: {err['call']} {what}")]
    known: set[str] = set()
    done: set[str] = set()
    for got in observed["steps"]:
        known.update(got["added"])
        k = got["step"]
        for seq_id, n in got.get("schedule") or []:
            if seq_id not in known or seq_id in done:
                return [Finding("hygiene", "H.unknown_id", k, "schedule",
                                f"step {k}: schedule() returned {seq_id!r}, which is not waiting or running")]
            if n <= 0:
                return [Finding("hygiene", "H.nonpositive", k, "schedule",
                                f"step {k}: schedule() returned {seq_id}: {n}; every n is >= 1 (I2)")]
        scheduled = {s for s, _ in got.get("schedule") or []}
        for seq_id in got.get("finished", []):
            if seq_id not in scheduled:
                return [Finding("hygiene", "H.unknown_id", k, "update",
                                f"step {k}: update() returned {seq_id!r}, which was not scheduled this step")]
        done.update(got.get("finished", []))
    return []
