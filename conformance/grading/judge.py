"""Grade one submission: run the frozen corpus in the sandbox, judge the returned traces here, score by rubric.

The child only observes (conformance.sandbox.run); every verdict is computed in this
process by the same checkers the conformance suite uses, so a grade is a pure
function of the submission, the rubric and the corpus version. Exploration
beyond the corpus is derandomized and labelled; the rubric says whether it counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from conformance.checks import checkers, probes
from conformance.checks.checkers import Finding
from conformance.grading.collect import Entry
from conformance.grading.diagnose import diagnose
from conformance.grading.outputs import Grade, ItemResult
from conformance.grading.rubric import Item, Rubric, RubricError
from conformance.grading.tables import markdown_table
from conformance.sandbox.protocol import ObservedStep, Snapshot
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits, SandboxResult, WorkloadResult
from conformance.workloads.corpus import CORPUS_DIR, PROBE_EVERY, features, load_corpus
from conformance.workloads.generators import ample_num_blocks, with_num_blocks
from spec.golden import GoldenCase, golden_cases
from spec.trace import Workload, workload_from_json, workload_to_json

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


EXPLORE_EXAMPLES = {"quick": 40, "default": 150, "thorough": 600}


@dataclass(frozen=True)
class Case:
    """One corpus vector to grade on: its workload, its feature tags, its golden case if it is one."""

    vector_id: str
    workload: Workload
    tags: tuple[str, ...]
    golden: GoldenCase | None = None
    twin: int | None = None  # index of its ample-cache twin in the sandbox run (equivalence), if any
    mutated: int | None = None  # index of its run with the returned dicts cleared (fresh-dict probe), if any


def corpus_id() -> str:
    import json

    manifest = json.loads((CORPUS_DIR / "MANIFEST.json").read_text())
    return f"p07-corpus/{manifest['corpus']}"  # the content version: adding a vector bumps it


@lru_cache(maxsize=2)
def corpus_cases(corpus: str) -> tuple[tuple[Case, ...], tuple[Workload | dict[str, Any], ...]]:
    """The cases of the corpus (golden first) and every workload the sandbox runs (with the twins)."""
    if corpus != corpus_id():
        raise RubricError(f"the rubric grades on corpus {corpus!r} but this schedcheck ships {corpus_id()!r}; "
                          "use the schedcheck release that has it, or update the rubric's corpus field")
    cases: list[Case] = [Case(f"golden/{g.name}", g.workload, ("golden", *features(g.workload)), g)
                         for g in golden_cases()]
    vectors, _ = load_corpus()
    cases += [Case(v.vector_id, v.workload, v.workload.tags or features(v.workload)) for v in vectors]
    runs: list[Workload | dict[str, Any]] = [c.workload for c in cases]
    out = []
    for i, c in enumerate(cases):
        if checkers.expected_trace(c.workload).final.num_preemptions:
            runs.append(with_num_blocks(c.workload, ample_num_blocks(c.workload)))
            c = replace(c, twin=len(runs) - 1)
        if i % PROBE_EVERY == 0:
            runs.append({**workload_to_json(c.workload), "probe": "mutate"})
            c = replace(c, mutated=len(runs) - 1)
        out.append(c)
    return tuple(out), tuple(runs)


def check_scope(rubric: Rubric) -> None:
    """Refuse a rubric with an item that no corpus case falls in (it would give free points)."""
    cases, _ = corpus_cases(rubric.corpus)
    empty = [i.id for i in rubric.items if not any(in_scope(i, c) for c in cases)]
    if empty:
        tags = sorted({t for c in cases for t in c.tags})
        raise RubricError(f"rubric items {empty} match no corpus case; use feature tags from: {', '.join(tags)}")


def with_profile(rubric: Rubric, profile: str) -> Rubric:
    return replace(rubric, explore_profile=profile)


# --- sandbox observations -> the suite's observed traces ------------------------------------------


def _snapshot(s: Snapshot | None) -> dict[str, Any] | None:
    if s is None or s.missing or None in (s.blocks_used, s.num_preemptions, s.waiting, s.running, s.finished):
        return None
    seqs = {}
    for v in s.seqs:
        if None in (v.num_computed, v.num_tokens, v.num_blocks, v.status, v.output):
            return None
        seqs[v.seq_id] = {"num_computed": v.num_computed, "num_tokens": v.num_tokens, "num_blocks": v.num_blocks,
                          "status": v.status, "output": list(v.output or ())}
    return {"blocks_used": s.blocks_used, "num_preemptions": s.num_preemptions, "waiting": list(s.waiting or ()),
            "running": list(s.running or ()), "finished": list(s.finished or ()), "seqs": seqs}


def observed_trace(workload: Workload, r: WorkloadResult) -> dict[str, Any]:
    """The conformance suite's observed-trace form of a sandboxed run (conformance.drivers)."""
    rule = workload.sample
    steps = []
    missing = None
    for s in r.steps:
        assert isinstance(s, ObservedStep)
        after_s, after_u = _snapshot(s.after_schedule), _snapshot(s.after_update)
        if (after_s is None or after_u is None) and missing is None:
            snap = s.after_schedule or s.after_update
            missing = ", ".join(f"{a} ({why})" for a, why in snap.missing) if snap and snap.missing else "unreadable"
        steps.append({"step": s.step, "added": list(s.added), "schedule": [list(p) for p in s.schedule],
                      "after_schedule": after_s,
                      "sampled": [[i, k, rule(i, (0,) * k)] for i, k in s.sample_calls],
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
            "white_box": True, "note": f"white-box checks skipped: {missing}" if missing else None,
            "steps": steps, "outputs": outputs, "stop": stop, "error": error}


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


# --- scoring ----------------------------------------------------------------------------------------


def in_scope(item: Item, case: Case) -> bool:
    return not item.features or bool(set(item.features) & set(case.tags))


def score_item(item: Item, rubric: Rubric, cases: tuple[Case, ...], verdicts: list[dict[str, Finding | None]],
               results: tuple[WorkloadResult, ...]) -> ItemResult:
    """Score one rubric item on the cases in its scope; the first failures are its output.

    The item's time is the wall time of its cases added up; past its limit it scores 0.
    """
    limit = item.seconds or rubric.limits.item_seconds
    # cases that timed out or never ran are failed below; only finished runs count toward the limit,
    # so a hang always gives the same report however far the run got
    spent = sum(r.seconds for c, r in zip(cases, results, strict=False)
                if in_scope(item, c) and r.status in ("ok", "stalled"))
    if spent > limit:
        return ItemResult(item, 0.0, "timeout", f"Time limit: this item's cases took {spent:.1f} s in all, "
                          f"more than its {limit:g} s. Look for a step whose cost grows with the run.")
    kinds = [category(r) for r in results]
    run = passed = 0
    lines: list[str] = []
    worst = "passed"
    for case, found, ended in zip(cases, verdicts, kinds, strict=True):
        relevant = [c for c in item.checks if c in found]
        if not in_scope(item, case) or not relevant:
            continue
        run += 1
        bad = [found[c] for c in relevant if found[c] is not None]
        if not bad and ended == "passed":
            passed += 1
            continue
        kind = ended if ended != "passed" else "failed"
        worst = kind if worst == "passed" or kind == "timeout" else worst
        if len(lines) < 5:
            f = bad[0] if bad else None
            lines.append(f"- `{case.vector_id}`: " + (f"[{f.check} {f.rule}] {f.message}" if f else kind))
    assert run, f"rubric item {item.id} has no case in scope (check_scope refuses such a rubric)"
    fraction = passed / run if rubric.scoring == "proportional" else float(passed == run)
    output = f"{passed} of {run} cases pass." + ("\n\n" + "\n".join(lines) if lines else "")
    return ItemResult(item, round(item.points * fraction, 2), worst, output, run, passed)


def run_notes(rubric: Rubric, result: SandboxResult) -> list[str]:
    """What went wrong in the run, in words that do not depend on timing: a hang reads the same every run."""
    notes = []
    timeouts = [w for w in result.workloads if category(w) == "timeout"]
    if timeouts:
        notes.append(f"{len(timeouts)} of {len(result.workloads)} runs timed out or were not reached (each may "
                     f"take {rubric.limits.workload_seconds:g} s, all together {rubric.limits.run_seconds:g} s); "
                     f"the first: workload {timeouts[0].index} ({timeouts[0].name or 'unnamed'})")
    crashed = [w for w in result.workloads if category(w) == "crashed"]
    if crashed:
        notes.append(f"{len(crashed)} of {len(result.workloads)} runs crashed; the first: workload "
                     f"{crashed[0].index} ({crashed[0].name or 'unnamed'}): {crashed[0].cause}")
    for stream, cut in (("stdout", result.stdout_truncated), ("stderr", result.stderr_truncated)):
        if cut:
            notes.append(f"{stream} truncated: the submission printed more than {rubric.limits.output_bytes} bytes; "
                         "printing is not graded, remove it")
    return notes


FIRST_BATCH, BATCH = 10, 100  # runs per sandboxed batch: the hang breaker is checked between batches


def run_corpus_sandboxed(path: Path, runs: tuple[Workload | dict[str, Any], ...], rubric: Rubric) -> SandboxResult:
    """Run every workload in the sandbox, in batches; after max_timeouts hangs the rest count as timeouts.

    The breaker depends only on which runs hang, never on how long the others took, so a
    submission that hangs gets the same grade every time, and grading it stays short.
    """
    limits = limits_for(rubric)
    parts: list[SandboxResult] = []
    done: list[WorkloadResult] = []
    start, size = 0, FIRST_BATCH
    while start < len(runs):
        hangs = sum(category(w) == "timeout" for w in done)
        if hangs >= rubric.limits.max_timeouts:
            done += [WorkloadResult(i, "", "not_run", f"not_run: skipped after {hangs} runs timed out")
                     for i in range(start, len(runs))]
            break
        if hangs:  # never run past the breaker inside a batch
            size = min(size, rubric.limits.max_timeouts - hangs)
        part = run_in_sandbox(path, runs[start:start + size], limits)
        parts.append(part)
        if part.load_error is not None:
            return part
        done += [replace(w, index=start + w.index) for w in part.workloads]
        start, size = start + size, BATCH
    first = parts[0]
    return replace(first, workloads=tuple(done), stdout_truncated=any(p.stdout_truncated for p in parts),
                   stderr_truncated=any(p.stderr_truncated for p in parts),
                   output_bytes=sum(p.output_bytes for p in parts), seconds=sum(p.seconds for p in parts),
                   notes=tuple(dict.fromkeys(n for p in parts for n in p.notes)))


def limits_for(rubric: Rubric) -> Limits:
    lim = rubric.limits
    return Limits(workload_seconds=lim.workload_seconds, workload_cpu_seconds=max(1, round(lim.workload_seconds)),
                  run_seconds=lim.run_seconds, cpu_seconds=max(1, round(lim.run_seconds)),
                  memory_bytes=lim.memory_mb << 20, output_bytes=lim.output_bytes)


def grade_one(entry: Entry, rubric: Rubric) -> Grade:
    """Grade one entry; never raises for anything the submission does."""
    begun = time.monotonic()
    if entry.module is None:
        items = tuple(ItemResult(i, 0.0, "crashed", f"Nothing to grade: {entry.problem}.") for i in rubric.items)
        return Grade(entry.name, rubric, items, "none", notes=(entry.problem,))
    cases, runs = corpus_cases(rubric.corpus)
    result = run_corpus_sandboxed(entry.module, runs, rubric)
    if result.load_error is not None:
        why = f"The module could not be loaded: {result.load_error}"
        items = tuple(ItemResult(i, 0.0, "crashed", why) for i in rubric.items)
        return Grade(entry.name, rubric, items, result.isolation.level, notes=(why,),
                     execution_seconds=time.monotonic() - begun)
    observed = [observed_trace(w if isinstance(w, Workload) else workload_from_json(w), r)
                for w, r in zip(runs, result.workloads, strict=True)]
    verdicts = [judge_case(c, observed[i], None if c.twin is None else observed[c.twin],
                           None if c.mutated is None else observed[c.mutated]) for i, c in enumerate(cases)]
    statuses = [r.status for r in result.workloads[:len(cases)]]
    items = tuple(score_item(item, rubric, cases, verdicts, result.workloads[:len(cases)]) for item in rubric.items)
    notes = run_notes(rubric, result) + sorted({o["note"] for o in observed if o["note"]})[:1]
    failing = [(c, observed[i], v) for i, (c, v) in enumerate(zip(cases, verdicts, strict=True))
               if any(v.values()) or statuses[i] != "ok"]
    counterexample, replay, diagnosis = "", None, ()
    if failing:
        case, obs, found = min(failing, key=lambda t: (len(t[0].workload.requests), len(t[1]["steps"]),
                                                       t[0].vector_id))
        first = next((f for f in found.values() if f is not None), None)
        counterexample = markdown_table(case.workload, obs, first, case.vector_id)
        replay = {"format": "schedcheck/workload", **workload_to_json(case.workload),
                  "finding": None if first is None else first.to_json()}
        diagnosis = diagnose([(c.workload, o) for c, o, _ in failing[:6]])
    return Grade(entry.name, rubric, items, result.isolation.level, diagnosis, tuple(notes),
                 explore(entry, rubric, result), counterexample, replay,
                 execution_seconds=time.monotonic() - begun)


def explore(entry: Entry, rubric: Rubric, corpus_run: SandboxResult) -> tuple[str, ...]:
    """Findings on derandomized generated workloads beyond the corpus, labelled as exploration."""
    if not rubric.explore or entry.module is None:
        return ()
    from conformance.grading.explore import generated_workloads

    workloads = generated_workloads(EXPLORE_EXAMPLES.get(rubric.explore_profile, 40))
    result = run_in_sandbox(entry.module, workloads, limits_for(rubric))
    found = []
    for w, r in zip(workloads, result.workloads, strict=True):
        obs = observed_trace(w, r)
        for judge in (checkers.differential, checkers.liveness, checkers.hygiene):
            f = judge(w, obs)
            if f:
                found.append(f"exploration: {len(w.requests)} requests, {w.config}: [{f[0].check} {f[0].rule}] "
                             f"{f[0].message}")
                break
        if len(found) >= 5:
            break
    return tuple(found)
