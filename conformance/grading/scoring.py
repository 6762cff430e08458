"""Score rubric items from the verdicts of every case, and write each item's feedback.

An item covers the cases whose feature tags it names and the checks it names; its score is
proportional (or all or nothing) to the cases that pass. A failed item's output is what
the student acts on: how many cases pass, the first failing cases in one line each, and the
smallest failing case as a counterexample to replay (conformance.grading.feedback).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from conformance.checks.checkers import Finding
from conformance.grading.escape import md, md_code
from conformance.grading.feedback import counterexample_md
from conformance.grading.observe import HELD_OUT, Case, Traces, category, cut_short
from conformance.grading.outputs import ItemResult
from conformance.grading.rubric import Item, Rubric
from conformance.sandbox.types import SandboxResult, WorkloadResult

LISTED_CASES = 5  # failing cases named in one line each


def in_scope(item: Item, case: Case) -> bool:
    return not item.features or bool(set(item.features) & set(case.tags))


def _line(case: Case, finding: Finding | None, kind: str, why: str | None) -> str:
    if why is not None:  # not reached, or cut short: no finding of its own to show
        what = md(why)
    else:
        what = f"\\[{md(finding.check, 40)} {md(finding.rule, 40)}\\] {md(finding.message)}" if finding else kind
    return f"- {md_code(case.vector_id, 120)}: {what}"


def score_item(item: Item, rubric: Rubric, cases: tuple[Case, ...], verdicts: list[dict[str, Finding | None]],
               missed: Sequence[Mapping[str, str]], results: tuple[WorkloadResult, ...], observed: Traces,
               command: str | None = None) -> ItemResult:
    """Score one rubric item on the cases in its scope; its output names the failures and replays the smallest.

    `missed`, by case: the checks it fails only because a run it needs was never reached (the budget was spent
    first; Observations.not_reached), each with why. Such a case fails, and is named as not reached: it is never
    the counterexample, which would replay a run that never happened.

    The item's time is the wall time of its cases added up; past its limit it scores 0. Otherwise its status
    is how its smallest failing case ended (one that ran, when any did): the case its output shows, so status
    and counterexample tell one story, and a wrong result reads "failed" even when bigger cases, run longer
    because of it, time out ("passed" when none fails). command: a wire program's, for the rerun lines.
    """
    limit = item.seconds or rubric.limits.item_seconds
    # cases that timed out or never ran are failed below; only finished runs count toward the limit,
    # so a hang always gives the same report however far the run got
    spent = sum(r.seconds for c, r in zip(cases, results, strict=False)
                if in_scope(item, c) and r.status in ("ok", "stalled"))
    if spent > limit:
        return ItemResult(item, 0.0, "timeout", f"Time limit: this item's cases took {spent:.1f} s in all, "
                          f"more than its {limit:g} s. Look for a step whose cost grows with the run.")
    run = passed = held_run = held_passed = 0
    status = "passed"
    failing: list[tuple[int, Finding | None, str, str | None]] = []  # case, finding, how it ended, why not reached
    failed_checks: set[str] = set()
    for index, (case, found, result) in enumerate(zip(cases, verdicts, results, strict=True)):
        relevant = [c for c in item.checks if c in found]
        if not in_scope(item, case) or not relevant:
            continue
        held = HELD_OUT in case.tags
        run += 1
        held_run += held
        ended = category(result)
        bad = [f for c in relevant if (f := found[c]) is not None]  # [H.history] too: it moves the blame only
        failed_checks.update("hygiene" if f.rule == "H.history" else c  # the blame: [H.history] is hygiene's, as in
                             for c in relevant if (f := found[c]) is not None)  # check's report, even off the item
        if not bad and ended == "passed":
            passed += 1
            held_passed += held
            continue
        kind = ended if ended != "passed" else "failed"
        why = cut_short(result)  # its own run: every way the case fails comes from that
        blamed = [c for c in relevant if found[c] is not None]
        if why is None and blamed and all(c in missed[index] for c in blamed):
            why = missed[index][blamed[0]]  # a probe's run
        # a case that crashed or timed out fails every item it is in: name why, whichever check saw it
        failing.append((index, bad[0] if bad else next((f for f in found.values() if f is not None), None),
                        "timeout" if why is not None else kind, why))
    assert run, f"rubric item {item.id} has no case in scope (check_scope refuses such a rubric)"
    fraction = _fraction(rubric, passed - held_passed, run - held_run)
    if held_run:  # a recording of the public cases' answers passes them all and no held-out one
        fraction = min(fraction, _fraction(rubric, held_passed, held_run))
    output = f"{passed} of {run} cases pass" + (f" ({held_passed} of the {held_run} held-out ones)." if held_run
                                                 else ".")
    shown = [t for t in failing if HELD_OUT not in cases[t[0]].tags]  # a held-out case's text is the submission's
    if failing:
        lines = [_line(cases[i], f, kind, why) for i, f, kind, why in shown[:LISTED_CASES]]
        more = len(shown) - LISTED_CASES
        lines += [f"- … and {more} more"] if more > 0 else []
        hidden = len(failing) - len(shown)
        lines += [f"- {hidden} held-out case{'s' if hidden > 1 else ''} (drawn for this submission alone, like the "
                  "corpus's; not shown)"] if hidden else []
        output += "\n\n" + "\n".join(lines)
        replayable = [t for t in shown if t[3] is None]
        index, finding, status, _ = min(replayable or shown or failing,
                                        key=lambda t: (not observed[t[0]]["steps"],  # one that ran
                                                       len(cases[t[0]].workload.requests),
                                                       len(observed[t[0]]["steps"]), cases[t[0]].vector_id))
        if replayable:
            output += "\n\n### The smallest failing case\n\n" + counterexample_md(cases[index], observed[index],
                                                                                finding, command)
        elif all(t[3] is not None for t in failing):
            output += (f"\n\nNo failing case here can be replayed: the first was {md(failing[0][3] or '')}. "
                       "Run `schedcheck check --profile default` on your file to time it on the same kinds of "
                       "workload, and look for a step whose cost grows with the run.")
        elif shown:
            output += ("\n\nThe public cases that fail here were not reached, so there is none to replay; a "
                       "held-out case fails on its own. Run `schedcheck check --profile default` on your file: its "
                       "generated workloads go past the corpus.")
        else:
            output += ("\n\nOnly held-out cases fail here; the public corpus's pass. Run `schedcheck check "
                       "--profile default` on your file: its generated workloads go past the corpus.")
    return ItemResult(item, round(item.points * fraction, 2), status, output, run, passed, tuple(sorted(failed_checks)))


def _fraction(rubric: Rubric, passed: int, run: int) -> float:
    """The share of an item's points that `passed` of `run` cases earn (no case: nothing held against it)."""
    if not run:
        return 1.0
    return passed / run if rubric.scoring == "proportional" else float(passed == run)


def held_out_notes(results: list[SandboxResult]) -> list[str]:
    """How the held-out runs ended, in counts only: their causes are text the submission wrote."""
    runs = [w for r in results for w in r.workloads]
    bad = {kind: sum(category(w) == kind for w in runs) for kind in ("timeout", "crashed")}
    return [f"{n} of the {len(runs)} held-out runs {'timed out' if kind == 'timeout' else 'crashed'}"
            for kind, n in bad.items() if n]


def run_notes(rubric: Rubric, result: SandboxResult) -> list[str]:
    """What went wrong in the run, in words that do not depend on timing: a hang reads the same every run."""
    notes = []
    timeouts = [w for w in result.workloads if category(w) == "timeout" and cut_short(w) is None]
    if timeouts:
        notes.append(f"{len(timeouts)} of {len(result.workloads)} runs timed out (each may "
                     f"take {rubric.limits.workload_seconds:g} s, more for one of many requests, all together "
                     f"{rubric.limits.run_seconds:g} s); "
                     f"the first: workload {timeouts[0].index} ({timeouts[0].name or 'unnamed'})")
    missed = [w for w in result.workloads if cut_short(w) is not None]
    if missed:
        notes.append(f"{len(missed)} of {len(result.workloads)} runs did not get their time, the first "
                     f"{cut_short(missed[0])}; the cases that need them fail, and none of them is a counterexample")
    crashed = [w for w in result.workloads if category(w) == "crashed"]
    if crashed:
        notes.append(f"{len(crashed)} of {len(result.workloads)} runs crashed; the first: workload "
                     f"{crashed[0].index} ({crashed[0].name or 'unnamed'}): {crashed[0].cause}")
    for stream, cut in (("stdout", result.stdout_truncated), ("stderr", result.stderr_truncated)):
        if cut:
            notes.append(f"{stream} truncated: the submission printed more than {rubric.limits.output_bytes} bytes; "
                         "printing is not graded, remove it")
    return notes
