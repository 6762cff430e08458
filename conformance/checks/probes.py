"""Checks that need more than one run: golden cases, output equivalence, a fresh dict, two instances.

Each takes a factory, runs the driver as often as it needs, and returns findings;
the judging parts stay pure functions of observed traces.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from conformance.adapters import Factory, SchedulerUnderTest
from conformance.checks.checkers import Finding, blame, expected_trace
from conformance.drivers import out_of_time, run_workload
from conformance.workloads.generators import ample_num_blocks, with_num_blocks
from spec.golden import GoldenCase, check_case, golden_cases
from spec.loop import RESAMPLE_SHIFT
from spec.model import DEFAULT_POLICY, Config, Policy, Sample
from spec.trace import Workload, with_policy

GOLDEN_FIELDS = ((("blocks_used", "num_blocks"), "I1"), (("num_computed",), "I3"), (("waiting", "running"), "I5"),
                 (("num_preemptions",), "P1.preempt"),
                 ((".output", "outputs"), "U.finish"))  # the rule a white-box field of the card belongs to


def golden_under(policy: Policy, notes: list[str]) -> tuple[GoldenCase, ...]:
    """The card's worked cases that hold under `policy`: those whose spec run it does not change.

    A worked case states the card's answer; where another policy schedules differently, the
    differential check judges the same workload under that policy instead.
    """
    cases = golden_cases()
    if policy == DEFAULT_POLICY:
        return cases
    kept = [c for c in cases if _calls(with_policy(c.workload, policy)) == _calls(c.workload)]
    if len(kept) < len(cases):
        left = ", ".join(c.name for c in cases if c not in kept)
        notes.append(f"golden: {len(cases) - len(kept)} of the card's worked cases ({left}) schedule differently "
                     f"under policy {policy}, so they are left out; the other checks judge them under {policy}")
    return tuple(replace(c, workload=with_policy(c.workload, policy)) for c in kept)


def _calls(w: Workload) -> tuple[object, ...]:
    """What the spec's calls return on `w`, step by step (the states name the policy, so they always differ)."""
    return tuple((s.batch, s.finished, s.sampled) for s in expected_trace(w).steps)


def golden(case: GoldenCase, factory: Factory, white_box: bool = True) -> list[Finding]:
    """Run one of the card's worked cases and compare every field the card gives."""
    return judge_golden(case, run_workload(case.workload, factory, white_box=white_box))


def judge_golden(case: GoldenCase, observed: dict[str, Any]) -> list[Finding]:
    """Compare an observed run of a card case with every field the card gives."""
    if observed["error"] is not None:
        err = observed["error"]
        if err["kind"] == "CallTimeout":
            return [Finding("golden", "H.timeout", err["step"], err["call"],
                            f"{case.name}: step {err['step']} {err['call']}() did not return: {err['message']}")]
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


def resampling(factory: Factory) -> Factory:
    """The factory with a sampler that returns a different token each time a position is sampled again.

    The workload's rule depends only on (seq_id, output so far), so a scheduler that
    loses tokens and recomputes them would get the same tokens back; a real model does
    not. A correct scheduler samples each position once, so its outputs are unchanged.
    """
    def make(config: Config, sample: Sample) -> SchedulerUnderTest:
        seen: dict[tuple[str, int], int] = {}

        def fresh(seq_id: str, output: tuple[int, ...]) -> int:
            token = sample(seq_id, output)
            key = (seq_id, len(output))
            times = seen.get(key, 0)
            seen[key] = times + 1
            return token + RESAMPLE_SHIFT * times
        return factory(config, fresh)
    return make


def resampled(observed: dict[str, Any]) -> bool:
    """Whether a run sampled some (sequence, output length) twice."""
    calls = [(s, k) for step in observed["steps"] for s, k, _ in step.get("sampled", [])]
    return len(calls) != len(set(calls))


def equivalence(workload: Workload, factory: Factory, tight: dict[str, Any] | None = None) -> list[Finding]:
    """The same workload with its own and with an ample cache ends with the same outputs (OUT).

    `tight` (the plain run, if already made) is reused unless it sampled a position
    twice; then the tight run is repeated with the resampling sampler.
    """
    if tight is None or resampled(tight):
        tight = run_workload(workload, resampling(factory), white_box=False)
    if tight["stop"] != "done":
        return []  # judge_equivalence would say nothing: spare the ample run (it may hang too)
    ample = run_workload(with_num_blocks(workload, ample_num_blocks(workload)), factory, white_box=False)
    return judge_equivalence(workload, tight, ample)


def judge_equivalence(workload: Workload, tight: dict[str, Any], ample: dict[str, Any]) -> list[Finding]:
    """Compare the outputs of two observed runs of a workload: its own cache and an ample one (OUT)."""
    if tight["stop"] != "done":
        return []  # a run that did not finish is liveness's or hygiene's finding
    if ample["stop"] != "done":  # made only to compare with: its failure is this check's (a time-out, maybe the
        if ample["error"] is not None and ample["error"]["kind"] == "CallTimeout":  # machine's, is inconclusive)
            return []
        why = f"{ample['error']['kind']} at step {ample['error']['step']}" if ample["error"] is not None else \
            f"stopped {ample['stop']} after {len(ample['steps'])} steps"
        return [Finding("equivalence", "OUT", len(tight["steps"]), "outputs",
                        f"with num_blocks={ample_num_blocks(workload)} (no preemption) the run did not finish ({why}), "
                        f"though with num_blocks={workload.config.num_blocks} it did: preemption must only cost time")]
    a, b = _outputs(ample), _outputs(tight)
    assert a is not None and b is not None
    for seq_id in sorted(set(a) | set(b)):
        if a.get(seq_id) != b.get(seq_id):
            return [Finding("equivalence", "OUT", len(tight["steps"]), "outputs",
                            f"{seq_id}.output is {b.get(seq_id)} with num_blocks={workload.config.num_blocks} but "
                            f"{a.get(seq_id)} with num_blocks={ample_num_blocks(workload)} (no preemption): "
                            "preemption must only cost time (a position sampled again gets a new token here, as from "
                            "a real model)", a.get(seq_id), b.get(seq_id))]
    return []


def first_difference(plain: dict[str, Any], other: dict[str, Any]) -> tuple[int, str, Any, Any] | None:
    for a, b in zip(plain["steps"], other["steps"], strict=False):
        for key, call in (("schedule", "schedule"), ("sampled", "update"), ("finished", "update")):
            if a.get(key) != b.get(key):
                return a["step"], call, a.get(key), b.get(key)
    if len(plain["steps"]) != len(other["steps"]) or plain["error"] != other["error"]:
        step = min(len(plain["steps"]), len(other["steps"])) + 1
        return step, "schedule", plain["stop"], other["stop"] if other["error"] is None else other["error"]
    return None


def changed(call: str, want: Any, got: Any, observed: dict[str, Any], step: int) -> tuple[Any, str]:
    """What a run's call at `step` gave instead of `want` (first_difference), and how to say it: a call that failed
    is named with its error, not as "None"."""
    err = observed["error"]
    if got is None and err is not None and err["step"] == step:
        got = f"{err['kind']}: {err['message']}"[:200]
        failed = err["call"] if "(" in err["call"] else f"{err['call']}()"  # add('a1'), schedule, update
        return got, f"{failed} raised {got}"
    return got, f"{call}() changed (from {want} to {got})"


def fresh_dict(workload: Workload, factory: Factory, plain: dict[str, Any] | None = None) -> list[Finding]:
    """Changing the dict schedule() returned must not change what update() does (H.fresh_dict)."""
    plain = plain if plain is not None else run_workload(workload, factory, white_box=False)
    return judge_cleared(plain, run_workload(workload, factory, white_box=False, mutate_results=True))


def judge_cleared(plain: dict[str, Any], mutated: dict[str, Any]) -> list[Finding]:
    """H.fresh_dict on a plain run and one whose caller changed each returned dict; a hang in the latter is a
    time-out (H.timeout), whichever run it hit."""
    if out_of_time(mutated):
        err = mutated["error"]
        return [Finding("hygiene", "H.timeout", err["step"], err["call"], f"step {err['step']}: {err['call']} "
                        f"{err['message']} (in the run whose caller changed every dict schedule() returned)")]
    return judge_fresh_dict(plain, mutated)


def judge_fresh_dict(plain: dict[str, Any], mutated: dict[str, Any]) -> list[Finding]:
    """Compare a plain run with one whose caller changed every dict schedule() returned (H.fresh_dict)."""
    diff = first_difference(plain, mutated)
    if diff is None:
        return []
    step, call, want, got = diff
    got, how = changed(call, want, got, mutated, step)
    return [Finding("hygiene", "H.fresh_dict", step, call,
                    f"step {step}: after the caller changed the dict schedule() returned (it writes other ids, "
                    f"empties it or changes every count, in turn), {how}; return a copy and keep the batch in an "
                    "instance field", want, got)]
