"""Grade one submission: run the frozen corpus in the sandbox, judge the returned traces here, score by rubric.

The child only observes (conformance.sandbox.run); every verdict is computed in this
process by the same checkers the conformance suite uses, so a grade is a pure
function of the submission, the rubric and the corpus version. Exploration
beyond the corpus is derandomized and labelled; the rubric says whether it counts.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from conformance.checks import checkers
from conformance.checks.checkers import Finding
from conformance.checks.history import other_workload
from conformance.checks.probes import golden_under
from conformance.grading.collect import Entry
from conformance.grading.confirm import confirmed
from conformance.grading.diagnose import diagnose
from conformance.grading.escape import md
from conformance.grading.feedback import (
    first_counterexample_md,
    load_error_md,
    missing_md,
    replay_json,
    submitted_command,
)
from conformance.grading.heldout import held_out_cases, held_out_seed, submission_bytes, submission_key
from conformance.grading.observe import HELD_OUT, Case, Joined, Observations, cut_short, explored
from conformance.grading.outputs import Grade, ItemResult
from conformance.grading.rubric import Rubric, RubricError
from conformance.grading.scoring import held_out_notes, in_scope, run_notes, score_item
from conformance.grading.stateful import machine_cases
from conformance.grading.tables import markdown_table
from conformance.sandbox.budget import reserved, topped_up
from conformance.sandbox.isolation import LEVELS
from conformance.sandbox.program import is_wire
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits, PlannedRun, SandboxResult, WorkloadResult
from conformance.workloads.corpus import CORPUS_DIR, PROBE_EVERY, features, load_corpus
from conformance.workloads.generators import ample_num_blocks, with_num_blocks
from conformance.workloads.reach import TAG as REACH_TAG
from conformance.workloads.reach import cases as reach_cases
from conformance.workloads.sentinels import TAG as SENTINEL_TAG
from conformance.workloads.sentinels import sentinel_workloads
from spec.model import DEFAULT_POLICY, Policy
from spec.trace import Workload, with_policy

__all__ = ["check_scope", "corpus_cases", "corpus_id", "grade_one", "limits_for", "with_profile"]

DIAGNOSED, DIAGNOSIS_WORK = 6, 2**21  # failing cases diagnosed: at most 6, while their work (diagnosis_work) adds
# up to at most two crowds of 512 (the smallest is always diagnosed)
CHILD_RECURSION_LIMIT = 1000  # a fresh CPython's: the sandbox child never changes it, so a grade never depends on
# the grader's (a reach tier's long run goes past twice it)
ISOLATION_ENV, HIDE_ENV = "SCHEDCHECK_ISOLATION", "SCHEDCHECK_HIDE"


def corpus_id() -> str:
    manifest = json.loads((CORPUS_DIR / "MANIFEST.json").read_text())
    return f"p07-corpus/{manifest['corpus']}"  # the content version: adding a vector bumps it


@lru_cache(maxsize=2)
def corpus_cases(corpus: str, policy: Policy = DEFAULT_POLICY, reach: tuple[str, ...] = ()
                 ) -> tuple[tuple[Case, ...], tuple[Workload | PlannedRun, ...]]:
    """The public cases (golden first, then the corpus, the sentinels and the reach tiers') and every workload
    the sandbox runs, each judged under `policy` (the card's worked cases only where that policy schedules them
    alike). The held-out cases are a submission's own: held_out_part."""
    if corpus != corpus_id():
        raise RubricError(f"the rubric grades on corpus {corpus!r} but this schedcheck ships {corpus_id()!r}; "
                          "use the schedcheck release that has it, or update the rubric's corpus field")
    cases: list[Case] = [Case(f"golden/{g.name}", g.workload, ("golden", *features(g.workload)), g)
                         for g in golden_under(policy, [])]
    vectors, _ = load_corpus()
    cases += [Case(v.vector_id, v.workload, v.workload.tags or features(v.workload)) for v in vectors]
    cases += [Case(f"{SENTINEL_TAG}/{w.name}", w, (SENTINEL_TAG, *features(w))) for w in sentinel_workloads()]
    cases += [Case(f"{REACH_TAG}/{c.name}", w, (REACH_TAG, *features(w))) for tier in reach
              for c in reach_cases(tier, CHILD_RECURSION_LIMIT) if not c.group for w in c.workloads]
    tail = [Case(f"stateful/{i}", w, ("stateful", *features(w)), machine_steps=n)
            for i, (w, n) in enumerate(machine_cases())]
    tail += [Case(f"{REACH_TAG}/{c.name}", c.workloads[0], (REACH_TAG, "instances"), lanes=c.workloads)
             for tier in reach for c in reach_cases(tier, CHILD_RECURSION_LIMIT) if c.group]
    return assemble(cases, tail, policy)


@lru_cache(maxsize=2)
def held_out_part(key: int, count: int, policy: Policy = DEFAULT_POLICY
                  ) -> tuple[tuple[Case, ...], tuple[Workload | PlannedRun, ...]]:
    """A submission's held-out cases (conformance.grading.heldout, drawn from `key`) and their runs, probed as
    the corpus's are; the grade runs them in a sandboxed run of their own."""
    return assemble(list(held_out_cases(key, count)), [], policy)


def assemble(probed: list[Case], tail: list[Case], policy: Policy
             ) -> tuple[tuple[Case, ...], tuple[Workload | PlannedRun, ...]]:
    """Cases and the runs they read: run i is case i's own; the probed cases' probe runs come after every
    case's, the state machine's runs and the groups (`tail`) have none of their own."""
    cases = [replace(c, workload=with_policy(c.workload, policy), lanes=tuple(with_policy(w, policy) for w in c.lanes))
             for c in probed + tail]
    runs: list[Workload | PlannedRun] = [c.workload for c in cases]
    out = [with_probes(i, c, runs) if i < len(probed) else c for i, c in enumerate(cases)]
    out = [with_pair(c, runs) if c.mutated is not None else c for c in out]
    alone: dict[Workload, int] = {}  # each scheduler of a group alone: its run, shared by the groups it is in
    out = [with_group(i, c, runs, alone) if c.lanes else c for i, c in enumerate(out)]
    return tuple(out), tuple(runs)


def alone_run(w: Workload) -> PlannedRun:
    """A run of `w` on one scheduler judged by its calls alone (black box, a group of one: conformance.sandbox.run
    prepare), as `check` makes the runs a probe is compared with: the ample-cache twin, each instance alone."""
    return PlannedRun(w, group=())


def with_probes(index: int, case: Case, runs: list[Workload | PlannedRun]) -> Case:
    """Case `index` with its probe runs appended to `runs`: an ample-cache twin when it preempts (equivalence),
    and on every PROBE_EVERY-th case, as `check` on every tenth corpus vector, a run whose returned dicts the
    caller changes (fresh-dict probe). The run of a case that preempts is itself a resample probe: a position
    sampled again gets a new token, as in the run `check` compares with the twin (conformance/checks/probes.py
    ``equivalence``). A scheduler that samples each position once, as the rules have it, sees no difference."""
    if checkers.expected_trace(case.workload).final.num_preemptions:
        runs[index] = PlannedRun(case.workload, "resample")
        runs.append(alone_run(with_num_blocks(case.workload, ample_num_blocks(case.workload))))
        case = replace(case, twin=len(runs) - 1)
    if index % PROBE_EVERY == 0:  # compared with the case's run: drawn by the same model
        runs.append(PlannedRun(case.workload, "mutate" if case.twin is None else "mutate+resample"))
        case = replace(case, mutated=len(runs) - 1)
    return case


def with_pair(case: Case, runs: list[Workload | PlannedRun]) -> Case:
    """A probed case with its two-instance probe appended to `runs`: its workload beside a second instance with
    another config, then that one alone. These come after every other run: instances that share state may leave
    some behind in the child's process, and no run judged on its own comes after them."""
    beside = "beside" if case.twin is None else "beside+resample"  # the first drawn as the case's run was
    runs += [PlannedRun(case.workload, beside), alone_run(other_workload(case.workload))]
    return replace(case, paired=len(runs) - 2, alone=len(runs) - 1)


def with_group(index: int, case: Case, runs: list[Workload | PlannedRun], alone: dict[Workload, int]) -> Case:
    """A group's case with its runs appended to `runs`: each scheduler alone, black box, as `check` runs it to compare
    (a group of one; the first's is the case's own run, `index`), once per distinct workload of every group (in
    `alone`: the groups of a tier share lanes), then the group's (the schedulers alive at once, as `check` runs a
    reach tier's group), after every other run, as a pair's (instances that share state may leave some behind)."""
    runs[index] = alone_run(case.lanes[0])
    indices = [alone.setdefault(case.lanes[0], index)]
    for w in case.lanes[1:]:
        if w not in alone:
            runs.append(alone_run(w))
            alone[w] = len(runs) - 1
        indices.append(alone[w])
    runs.append(PlannedRun(case.lanes[0], group=case.lanes[1:]))
    return replace(case, group=len(runs) - 1, lanes_alone=tuple(indices))


def run_workloads(runs: tuple[Workload | PlannedRun, ...]) -> tuple[Workload, ...]:
    """The workload of each run (a planned run's own: the first scheduler's of a group)."""
    return tuple(w if isinstance(w, Workload) else w.workload for w in runs)


def grading_cases(rubric: Rubric) -> tuple[tuple[Case, ...], tuple[Workload | PlannedRun, ...]]:
    """corpus_cases for a rubric: what every submission runs (its held-out cases are its own: held_out_part)."""
    return corpus_cases(rubric.corpus, rubric.policy, rubric.reach)


def check_scope(rubric: Rubric) -> None:
    """Refuse a rubric with an item that no corpus case falls in (it would give free points)."""
    deployment()  # a bad SCHEDCHECK_ISOLATION or SCHEDCHECK_HIDE is refused before any grading
    cases, _ = corpus_cases(rubric.corpus, policy=rubric.policy, reach=rubric.reach)
    empty = [i.id for i in rubric.items if not any(in_scope(i, c) for c in cases)]
    if empty:
        tags = sorted({t for c in cases for t in c.tags})
        raise RubricError(f"rubric items {empty} match no corpus case; use feature tags from: {', '.join(tags)}")


def with_profile(rubric: Rubric, profile: str) -> Rubric:
    return replace(rubric, explore_profile=profile)



# --- running the corpus ------------------------------------------------------------------------------

def run_corpus_sandboxed(path: Path, cases: tuple[Case, ...], runs: tuple[Workload | PlannedRun, ...],
                         rubric: Rubric) -> SandboxResult:
    """Run every workload in the sandbox, segment by segment (run_order); in each, after max_timeouts hangs the rest
    count as timeouts, not run.

    The cut depends only on which runs hang, never on how long the others took, so a submission
    that hangs gets the same grade every time, and grading it stays short.
    """
    plan = ordered(cases, runs)
    return joined(plan, run_segments(path, plan, rubric), len(runs))


def run_segments(path: Path, plan: Sequence[Segment], rubric: Rubric, before: Sequence[SandboxResult] = ()
                 ) -> list[SandboxResult]:
    """Each segment of `plan` in a sandboxed run of its own (a fresh process), one after another, on one budget
    and one allowance of hangs: after max_timeouts hangs in them and in the segments `before` them, the rest count
    as time-outs, as in one run (each segment with an allowance of its own made a submission that hangs everywhere
    hang max_timeouts times per segment: eight times the wall time)."""
    limits = replace(limits_for(rubric), max_timeouts=rubric.limits.max_timeouts)
    out: list[SandboxResult] = []
    for segment in plan:
        out.append(run_in_sandbox(path, segment.runs, limits, hung=hangs([*before, *out])))
    return out


def hangs(results: Sequence[SandboxResult]) -> int:
    """The runs that hung: not the runs never started (a budget's cut leaves the reach runs their reserve)."""
    return sum(r.hung and r.status != "not_run" for s in results for r in s.workloads)


def joined(plan: Sequence[Segment], results: Sequence[SandboxResult], count: int) -> SandboxResult:
    """The sandboxed runs of `plan`'s segments as one, its workloads back in the runs' own order (index i: run i)."""
    by_run = {i: replace(ran, index=i) for segment, result in zip(plan, results, strict=True)
              for i, ran in zip(segment.order, result.workloads, strict=True)}
    first = results[0]
    return replace(first, workloads=tuple(by_run[i] for i in range(count)),
                   stdout="".join(r.stdout for r in results), stderr="".join(r.stderr for r in results),
                   stdout_truncated=any(r.stdout_truncated for r in results),
                   stderr_truncated=any(r.stderr_truncated for r in results),
                   output_bytes=sum(r.output_bytes for r in results),
                   refused_imports=tuple(dict.fromkeys(m for r in results for m in r.refused_imports)),
                   children=sum(r.children for r in results), survivors=sum(r.survivors for r in results),
                   seconds=sum(r.seconds for r in results), cpu_seconds=sum(r.cpu_seconds for r in results),
                   notes=tuple(dict.fromkeys(n for r in results for n in r.notes)))


@dataclass(frozen=True)
class Segment:
    """Runs made in one sandboxed run, in the order they run: `order` their indices, `runs` the runs."""

    order: tuple[int, ...]
    runs: tuple[Workload | PlannedRun, ...]


_ordered: dict[int, tuple[tuple[Workload | PlannedRun, ...], tuple[Segment, ...]]] = {}


def ordered(cases: tuple[Case, ...], runs: tuple[Workload | PlannedRun, ...]) -> tuple[Segment, ...]:
    """run_order of `runs` as segments, made once per tuple of runs: the public runs are one tuple for every
    submission, and the sandbox prepares a tuple's runs once (conformance.sandbox.run.prepared)."""
    kept = _ordered.get(id(runs))
    if kept is None or kept[0] is not runs:  # the tuple is held: its id is not reused while it is kept
        if len(_ordered) >= 4:
            _ordered.clear()
        plan = tuple(Segment(tuple(order), tuple(runs[i] for i in order)) for order in run_order(cases, runs))
        kept = _ordered[id(runs)] = (runs, plan)
    return kept[1]


def run_order(cases: tuple[Case, ...], runs: tuple[Workload | PlannedRun, ...]) -> list[list[int]]:
    """The order the sandbox runs `runs` in, in segments, each a sandboxed run of its own: the runs of the reach
    tiers' cases apart from the others', as `check` runs its reach stage after the rest. In each, the cases' own runs,
    then the runs they are compared with (ample-cache twins, fresh-dict probes) in the same order, then the rest as
    planned (schedulers alive at once come after every run judged on its own: assemble). The reach cases come in
    classes of size (REACH_CLASSES), each as two segments: its runs alone, then its schedulers alive at once.

    The reach tiers go to 2^64 blocks, tokens and values: a scheduler whose memory or time grows with them (a table
    of block ids, a bitmap of free blocks) fails the largest of them, and those alone. Among the others' runs, their
    hangs made the rest of every run count as time-outs after max_timeouts of them, and their crashes spent the
    budget: a correct scheduler with a free list of block ids scored 5.63. Apart, ordered by their largest number
    (reach_size), what a hang skips, and where the budget runs out, is what is larger still (73.33 now).

    A submission slower than its budget is cut where its CPU runs out. In the corpus's order (golden, then family by
    family) the cut took whole families, and with them most of an item's cases, and the public and held-out parts of
    an item were cut at different depths. The other cases are shuffled, so every item loses about the same share of
    them; the reach cases, which come after, go first."""
    together = next((i for i, r in enumerate(runs) if isinstance(r, PlannedRun) and (r.group or "beside" in r.probe)),
                    len(runs))
    shuffled = list(range(len(cases)))  # case k's own run is run k
    random.Random(len(cases)).shuffle(shuffled)
    reach = [k for k in range(len(cases)) if REACH_TAG in cases[k].tags]
    of_reach = {i for k in reach for i in (k, cases[k].twin, cases[k].mutated, cases[k].paired, cases[k].alone,
                                           cases[k].group, *cases[k].lanes_alone) if i is not None}

    def alone(ks: list[int]) -> list[int]:
        probes = (i for k in ks for i in (cases[k].twin, cases[k].mutated) if i is not None and i < together)
        return list(dict.fromkeys([*(k for k in ks if k < together), *probes]))

    first = alone([k for k in shuffled if k not in of_reach])
    first += [i for i in range(together, len(runs)) if i not in of_reach]
    out = [first]
    for low, high in REACH_CLASSES:
        ks = sorted((k for k in reach if low <= reach_size(cases[k].workload) < high),
                    key=lambda k: (reach_size(cases[k].workload), cases[k].vector_id))
        out.append(alone(ks))
        out.append(list(dict.fromkeys(i for k in ks for i in sorted(
            j for j in (cases[k].paired, cases[k].alone, *cases[k].lanes_alone, cases[k].group)
            if j is not None and j >= together))))
    assert sorted(i for order in out for i in order) == list(range(len(runs))), "every run in exactly one segment"
    return [order for order in out if order]


REACH_CLASSES = ((0, 2**16 + 2), (2**16 + 2, 2**32 + 2), (2**32 + 2, 2**128))  # the reach cases in classes by
# reach_size: to 2^16 + 1 (uint16; the crowds, ids and groups are there), to 2^32 + 1 (int32, uint32: the quick
# tier's numbers) and past them; each class's runs alone, then its runs of schedulers alive at once, each a segment:
# the largest runs of a class are no longer spent before the smaller runs of schedulers alive at once


def reach_size(w: Workload) -> int:
    """The largest number a workload holds: of its config, its requests' counts and lengths, its request count."""
    c = w.config
    return max(c.num_blocks, c.block_size, c.max_num_seqs, c.max_num_batched_tokens, len(w.requests),
               *(r.prompt_len + r.max_tokens for r in w.requests))



def deployment() -> tuple[str | None, tuple[str, ...]]:
    """The isolation level to force and more directories to hide, from SCHEDCHECK_ISOLATION and SCHEDCHECK_HIDE.

    These belong to the machine, not to the grade (a grade never depends on them), so they come from
    the environment: the Gradescope runner hides the whole autograder root from the child, and a test
    forces the lowest level to check what a submission sees there.
    """
    level = os.environ.get(ISOLATION_ENV) or None
    if level is not None and level not in LEVELS:
        raise RubricError(f"{ISOLATION_ENV} is {level!r}; use one of {', '.join(LEVELS)}, or unset it for the best "
                          "level this machine allows")
    hide = tuple(p for p in os.environ.get(HIDE_ENV, "").split(":") if p)
    relative = [p for p in hide if not p.startswith("/")]
    if relative:
        raise RubricError(f"{HIDE_ENV} holds relative paths {relative}; give absolute paths separated by ':'")
    return level, hide


def limits_for(rubric: Rubric) -> Limits:
    lim = rubric.limits
    level, hide = deployment()
    return Limits(workload_seconds=lim.workload_seconds, workload_cpu_seconds=max(1, round(lim.workload_seconds)),
                  run_seconds=lim.run_seconds, cpu_seconds=max(1, round(lim.run_seconds)),
                  memory_bytes=lim.memory_mb << 20, output_bytes=lim.output_bytes, isolation=level, hide=hide)


# --- grading one entry ----------------------------------------------------------------------------------


def not_submitted(entry: Entry, rubric: Rubric) -> Grade:
    """Every item 0 as "not submitted"; the summary lists what was found instead and what to rename."""
    why = f"Not submitted: there is no `p07_scheduler.py` to grade ({md(entry.problem)}); see the top of this page."
    items = tuple(ItemResult(i, 0.0, "not submitted", why) for i in rubric.items)
    return Grade(entry.name, rubric, items, "none", notes=(entry.problem,),
                 feedback=missing_md(entry.source, entry.problem))


def does_not_load(entry: Entry, rubric: Rubric, result: SandboxResult, begun: float) -> Grade:
    """Every item 0 as "does not load"; the summary shows the error once, at its line."""
    assert result.load_error is not None
    short, full = load_error_md(result, result.load_error, submitted_command(entry.module))
    why = f"Not run: {md(short)} (the error is shown at the top of this page)."
    items = tuple(ItemResult(i, 0.0, "does not load", why) for i in rubric.items)
    return Grade(entry.name, rubric, items, result.isolation.level, notes=(f"The module could not be loaded: "
                                                                           f"{result.load_error}",),
                 feedback=full, execution_seconds=time.monotonic() - begun)


def grade_one(entry: Entry, rubric: Rubric) -> Grade:
    """Grade one entry; never raises for anything the submission does."""
    begun = time.monotonic()
    if entry.module is None:
        return not_submitted(entry, rubric)
    public, runs = grading_cases(rubric)
    held: tuple[Case, ...] = ()
    held_runs: tuple[Workload | PlannedRun, ...] = ()
    if rubric.held_out:  # the submission's own, in a run of their own: the public runs are the same for all
        key = submission_key(held_out_seed()[0], submission_bytes(entry.module))
        held, held_runs = held_out_part(key, rubric.held_out, rubric.policy)
    plan = ordered(public, runs)
    held_result = None
    with reserved((len(runs) - len(plan[0].runs)) / len(runs)):  # the reach cases' share, spent after the rest
        opening = run_segments(entry.module, plan[:1], rubric)
        if opening[0].load_error is not None:
            return does_not_load(entry, rubric, opening[0], begun)
        if held_runs:  # too slow for the budget, a submission loses about the same share of each part
            with topped_up(len(held_runs) / len(runs)):
                held_result = run_corpus_sandboxed(entry.module, held, held_runs, rubric)
    result = joined(plan, opening + run_segments(entry.module, plan[1:], rubric, opening), len(runs))  # reach last
    parts = [(public, runs, result)] + ([(held, held_runs, held_result)] if held_result is not None else [])
    cases: tuple[Case, ...] = ()
    verdicts: list[dict[str, Finding | None]] = []
    missed: list[dict[str, str]] = []  # by case: the checks it fails only for a run never reached (not replayable)
    ran: tuple[WorkloadResult, ...] = ()
    views: list[Observations] = []
    for part, part_runs, part_result in parts:
        view = Observations(run_workloads(part_runs), part_result.workloads, limits_for(rubric).workload_cpu_seconds)
        judged = [view.judge(c, i) for i, c in enumerate(part)]
        if not is_wire(entry.module):  # a program's state is its own process's: nothing to load anew
            judged = confirmed(entry.module, limits_for(rubric), part, part_runs, judged)
        cases, ran, views = cases + part, ran + part_result.workloads[:len(part)], [*views, view]
        verdicts += judged
        missed += [view.not_reached(c, i, v) for i, (c, v) in enumerate(zip(part, judged, strict=True))]
    observed = Joined(views, [len(part) for part, _, _ in parts])
    command = submitted_command(entry.module)  # a wire program's: every rerun line names it
    items = tuple(score_item(item, rubric, cases, verdicts, missed, ran, observed, command) for item in rubric.items)
    public_view = views[0]
    notes = run_notes(rubric, result) + held_out_notes([r for _, _, r in parts[1:]]) + public_view.notes()
    # what the student is shown comes from the public cases: a held-out case's text is the submission's own
    # ... and from what ran: a finding that rests on a run never reached replays nothing (Observations.not_reached)
    replayable = [{k: f for k, f in v.items() if k not in m} for v, m in zip(verdicts, missed, strict=True)]
    failing = [(c, observed[i], found) for i, (c, found) in enumerate(zip(cases, replayable, strict=True))
               if HELD_OUT not in c.tags and cut_short(ran[i]) is None
               and (any(found.values()) or ran[i].status != "ok")]
    counterexample, replay = "", None
    diagnosis: tuple[str, ...] = ()
    if failing:  # smallest first: the counterexample, and the cases the diagnosis reruns every known bug on
        failing.sort(key=lambda t: (len(t[0].workload.requests), len(t[1]["steps"]), t[0].vector_id))
        case, obs, found = failing[0]
        first = next((f for f in found.values() if f is not None), None)
        counterexample = first_counterexample_md(markdown_table(case.workload, obs, first, case.vector_id), command)
        replay = replay_json(case, first)
        tried = diagnosed(failing)
        diagnosis = diagnose([(c.workload, o) for c, o, _ in tried])
        if not tried:
            w = case.workload
            notes.append(f"No known bug was tried: the smallest failing case ({case.vector_id}) runs "
                         f"{len(checkers.expected_trace(w).steps)} steps of {len(w.requests)} requests, more than "
                         "rerunning every known bug on it costs here; its counterexample is below.")
    return Grade(entry.name, rubric, items, result.isolation.level, diagnosis, tuple(notes),
                 explore(entry, rubric, result), counterexample, replay,
                 execution_seconds=time.monotonic() - begun)


def diagnosed(failing: list[tuple[Case, dict[str, Any], dict[str, Finding | None]]]
              ) -> list[tuple[Case, dict[str, Any], dict[str, Finding | None]]]:
    """The failing cases the diagnosis reruns every known bug on: the smallest, then the next ones up to
    DIAGNOSED in all while their diagnosis_work adds up to at most DIAGNOSIS_WORK (none when the smallest alone
    is past it: a submission failing only runs of thousands of steps cost 16 s of diagnosis that named nothing)."""
    out, work = failing[:1], diagnosis_work(failing[0][0].workload) if failing else 0
    if work > DIAGNOSIS_WORK:
        return []
    for t in failing[1:DIAGNOSED]:
        work += diagnosis_work(t[0].workload)
        if work > DIAGNOSIS_WORK:
            break
        out.append(t)
    return out


def diagnosis_work(w: Workload) -> int:
    """What rerunning the known bugs on `w` costs, in units of about 40 ns: the bugs are built on the spec, whose
    step costs about 80 us plus the square of the sequences in flight (a crowd of 2,049 takes 0.3 s per bug, a
    head blocked for 2,049 steps 0.2 s: counted by requests alone, six of those cost 33 s per submission)."""
    return len(checkers.expected_trace(w).steps) * (len(w.requests) ** 2 + 2**11)


def explore(entry: Entry, rubric: Rubric, corpus_run: SandboxResult) -> tuple[str, ...]:
    """Findings on derandomized generated workloads beyond the corpus, labelled as exploration."""
    if not rubric.explore or entry.module is None:
        return ()
    from conformance.grading.explore import generated_workloads

    workloads = generated_workloads(rubric.explore_profile)
    result = run_in_sandbox(entry.module, workloads, limits_for(rubric))
    found = []
    for w, r in zip(workloads, result.workloads, strict=True):
        line = explored(w, r)
        if line is not None:
            found.append(line)
        if len(found) >= 5:
            break
    return tuple(found)
