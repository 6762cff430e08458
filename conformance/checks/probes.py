"""Checks that need more than one run: golden cases, output equivalence, a fresh dict, two instances.

Each takes a factory, runs the driver as often as it needs, and returns findings;
the judging parts stay pure functions of observed traces.
"""

from __future__ import annotations

from typing import Any

from conformance.adapters import Factory, SchedulerUnderTest
from conformance.checks.checkers import Finding, blame, expected_trace
from conformance.drivers import run_workload
from conformance.workloads.generators import ample_num_blocks, with_num_blocks
from spec.golden import GoldenCase, check_case
from spec.model import Config, Sample
from spec.trace import Workload

GOLDEN_FIELDS = ((("blocks_used", "num_blocks"), "I1"), (("num_computed",), "I3"), (("waiting", "running"), "I5"),
                 ((".output", "outputs"), "U.finish"))  # the rule a white-box field of the card belongs to


def golden(case: GoldenCase, factory: Factory, white_box: bool = True) -> list[Finding]:
    """Run one of the card's worked cases and compare every field the card gives."""
    return judge_golden(case, run_workload(case.workload, factory, white_box=white_box))


def judge_golden(case: GoldenCase, observed: dict[str, Any]) -> list[Finding]:
    """Compare an observed run of a card case with every field the card gives."""
    if observed["error"] is not None:
        err = observed["error"]
        return [Finding("golden", "H.raised", err["step"], err["call"],
                        f"{case.name}: step {err['step']} {err['call']} raised {err['kind']}: {err['message']}")]
    trace = {"steps": [{k: v for k, v in s.items() if v is not None} for s in observed["steps"]],
             "outputs": observed["outputs"] or {}}
    if observed["outputs"] is not None:
        trace["outputs"] = {k: v for k, v in observed["outputs"].items()
                            if k in {r.seq_id for r in case.workload.requests}}
    problems = check_case(case, trace)
    if not problems:
        return []
    first = next((p for p in problems if " step " in p), problems[0])  # a step's mismatch says the most
    step = next((i + 1 for i, s in enumerate(case.steps) if f"step {i + 1}" in first), len(case.steps))
    spec_steps = expected_trace(case.workload).steps
    events = spec_steps[step - 1].events if step <= len(spec_steps) else ()
    got = observed["steps"][step - 1].get("schedule") if step <= len(observed["steps"]) else None
    want = case.steps[step - 1]["schedule"] if step <= len(case.steps) else None
    ids = [p[0] for p in (want or []) + (got or []) if p not in (got or []) or p not in (want or [])]
    if got != want:
        rule = blame(tuple(e for e in events if e.rule.startswith("P")), ids, "P1")
    else:
        rule = next((r for words, r in GOLDEN_FIELDS if any(w in first for w in words)), "U.finish")
    return [Finding("golden", rule, step, "schedule" if got != want else "update", first, want, got,
                    tuple(f"{e.rule}: {e.message}" for e in events))]


def _outputs(observed: dict[str, Any]) -> dict[str, list[int]] | None:
    """Final outputs: the adapter's, else rebuilt from the sample_fn calls."""
    if observed["outputs"] is not None:
        return dict(observed["outputs"])
    out: dict[str, list[int]] = {}
    for step in observed["steps"]:
        for seq_id, k, token in step.get("sampled", []):
            out[seq_id] = out.get(seq_id, [])[:k] + [token]
    return out


def equivalence(workload: Workload, factory: Factory, tight: dict[str, Any] | None = None) -> list[Finding]:
    """The same workload with its own and with an ample cache ends with the same outputs (OUT)."""
    tight = tight if tight is not None else run_workload(workload, factory, white_box=False)
    ample = run_workload(with_num_blocks(workload, ample_num_blocks(workload)), factory, white_box=False)
    return judge_equivalence(workload, tight, ample)


def judge_equivalence(workload: Workload, tight: dict[str, Any], ample: dict[str, Any]) -> list[Finding]:
    """Compare the outputs of two observed runs of a workload: its own cache and an ample one (OUT)."""
    if tight["stop"] != "done" or ample["stop"] != "done":
        return []  # a run that did not finish is liveness's or hygiene's finding
    a, b = _outputs(ample), _outputs(tight)
    assert a is not None and b is not None
    for seq_id in sorted(set(a) | set(b)):
        if a.get(seq_id) != b.get(seq_id):
            return [Finding("equivalence", "OUT", len(tight["steps"]), "outputs",
                            f"{seq_id}.output is {b.get(seq_id)} with num_blocks={workload.config.num_blocks} but "
                            f"{a.get(seq_id)} with num_blocks={ample_num_blocks(workload)} (no preemption): "
                            "preemption must only cost time", a.get(seq_id), b.get(seq_id))]
    return []


def _first_difference(plain: dict[str, Any], other: dict[str, Any]) -> tuple[int, str, Any, Any] | None:
    for a, b in zip(plain["steps"], other["steps"], strict=False):
        for key, call in (("schedule", "schedule"), ("sampled", "update"), ("finished", "update")):
            if a.get(key) != b.get(key):
                return a["step"], call, a.get(key), b.get(key)
    if len(plain["steps"]) != len(other["steps"]) or plain["error"] != other["error"]:
        step = min(len(plain["steps"]), len(other["steps"])) + 1
        return step, "schedule", plain["stop"], other["stop"] if other["error"] is None else other["error"]
    return None


def fresh_dict(workload: Workload, factory: Factory, plain: dict[str, Any] | None = None) -> list[Finding]:
    """Clearing the dict schedule() returned must not change what update() does (H.fresh_dict)."""
    plain = plain if plain is not None else run_workload(workload, factory, white_box=False)
    return judge_fresh_dict(plain, run_workload(workload, factory, white_box=False, mutate_results=True))


def judge_fresh_dict(plain: dict[str, Any], mutated: dict[str, Any]) -> list[Finding]:
    """Compare a plain run with one whose caller cleared every dict schedule() returned (H.fresh_dict)."""
    diff = _first_difference(plain, mutated)
    if diff is None:
        return []
    step, call, want, got = diff
    return [Finding("hygiene", "H.fresh_dict", step, call,
                    f"step {step}: after the caller cleared the dict schedule() returned, {call}() changed "
                    f"(from {want} to {got}); return a copy and keep the batch in an instance field", want, got)]


class _Pair:
    """Two instances fed the same calls (the second with renamed ids); they must agree at every call."""

    def __init__(self, factory: Factory, config: Config, sample: Sample) -> None:
        def silent(seq_id: str, output: tuple[int, ...]) -> int:
            token: int = sample.rule(seq_id[2:], output)  # type: ignore[attr-defined]
            return token
        self.b: SchedulerUnderTest = factory(config, silent)  # created first: the first instance comes second
        self.a: SchedulerUnderTest = factory(config, sample)

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.a.add(seq_id, prompt_len, max_tokens)
        self.b.add("b:" + seq_id, prompt_len, max_tokens)

    def schedule(self) -> object:
        got, other = self.a.schedule(), self.b.schedule()
        if isinstance(got, dict) and isinstance(other, dict) and \
                [("b:" + str(k), v) for k, v in got.items()] != list(other.items()):
            raise AssertionError(f"two instances disagree: {got} vs {other}")
        return got

    def update(self) -> list[str]:
        got, other = self.a.update(), self.b.update()
        if ["b:" + s for s in got] != list(other):
            raise AssertionError(f"two instances disagree on update(): {got} vs {other}")
        return got

    def outputs(self) -> dict[str, list[int]] | None:
        return self.a.outputs()

    def snapshot(self) -> None:
        return None


def instances(workload: Workload, factory: Factory, plain: dict[str, Any] | None = None) -> list[Finding]:
    """Two Scheduler instances in one process must not share state (H.instances)."""
    plain = plain if plain is not None else run_workload(workload, factory, white_box=False)
    paired = run_workload(workload, lambda c, s: _Pair(factory, c, s), white_box=False)
    diff = _first_difference(plain, paired)
    if diff is None:
        return []
    step, call, want, got = diff
    return [Finding("hygiene", "H.instances", step, call,
                    f"step {step}: with a second Scheduler instance alive, {call}() changed (from {want} to {got}); "
                    "keep all state in instance fields, not class attributes or module globals", want, got)]
