"""Sandbox observations as the conformance suite's observed traces, and the verdict of every check on one case.

The child only observes; this module turns what it reported into the suite's trace form
(conformance.drivers) and runs the same checkers as `schedcheck check` on it, in the
grader's process, so a verdict never depends on anything the submission computed about itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from conformance.checks import checkers, history, probes, whitebox
from conformance.checks.checkers import Finding
from conformance.checks.machine_run import machine_finding
from conformance.drivers import step_capped
from conformance.observed import begun
from conformance.retention import Kept
from conformance.sandbox.memo import Memo, digest
from conformance.sandbox.run import SKIPPED_AFTER_HANGS
from conformance.sandbox.types import WorkloadResult, cpu_scaled
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
    paired: int | None = None  # index of its run beside a second instance (two-instance probe), if any
    alone: int | None = None  # ... and of the second instance's workload run alone
    machine_steps: int | None = None  # a run of the state machine (stateful check): the steps the machine took
    lanes: tuple[Workload, ...] = ()  # a group of schedulers alive at once (a reach tier's): every one's workload,
    group: int | None = None  # ... the index of the group's run (after every other: it may leave state behind),
    lanes_alone: tuple[int, ...] = ()  # ... and of each one's run alone (the first: the case's own run)


Pair = tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]  # the two instances' traces, the second's alone


CRASHES = {"exception": "crashed", "memory": "crashed", "exit": "crashed", "signal": "crashed",
           "protocol": "crashed", "load_error": "crashed", "timeout": "timeout", "cpu_limit": "timeout",
           "not_run": "timeout", "abandoned": "crashed", "stalled": "failed", "ok": "passed",
           "sandbox_error": "crashed"}


def category(r: WorkloadResult) -> str:
    """How a run ended, for scoring: passed (ran to the end), failed, timeout or crashed.

    A SIGKILL comes from the hard CPU limit: a hang, like a wall-clock timeout, whichever limit fired first.
    """
    return "timeout" if r.hung else CRASHES[r.status]


def observed_trace(workload: Workload, r: WorkloadResult) -> dict[str, Any]:
    """The observed trace of a sandboxed run (docs/trace-format.md): the child's steps as the parent
    validated them, ended as the parent saw the run end (a limit it enforced, a crash it saw)."""
    d = r.trace
    steps = list(d.steps) if d is not None else []
    stop = {"ok": "done", "stalled": "bound"}.get(r.status, "error")
    error = step_capped(workload, len(steps)) if stop == "bound" else None  # stopped as check's drivers stop it
    if error is not None:
        stop = "error"
    elif stop == "error":
        e = r.error
        if r.status == "not_run" or cut_short(r) is not None:  # a time-out (it counts as one), in words that say
            error = {"step": len(steps) + 1, "call": "run", "kind": "CallTimeout",  # it never got its own time
                     "message": f"did not run to its end: {cut_short(r) or r.cause.removeprefix('not_run: ')}"}
        elif category(r) == "timeout":  # the same words whichever limit (wall, CPU) fired first
            error = {"step": len(steps) + 1, "call": "run", "kind": "CallTimeout",
                     "message": "did not finish within its time limit (an endless loop, or far too slow)"}
        elif e is not None:
            error = {**e, "kind": "bad_result", "message": r.cause} if r.status == "protocol" else dict(e)
        else:
            error = {"step": len(steps) + 1, "call": "run", "kind": "bad_result" if r.status == "protocol"
                     else r.status, "message": r.cause}
    last = steps[-1].get("after_update") if steps else None
    outputs = None
    if stop == "done":  # read by the last snapshot; or, where another field was unreadable, by the output alone
        outputs = {k: v["output"] for k, v in last["seqs"].items()} if last else d.outputs if d is not None else None
    note = d.note if d is not None and d.white_box_error is None else None
    return {**begun(workload_to_json(workload), True, steps), "note": note, "outputs": outputs, "stop": stop,
            "error": error, "white_box_error": d.white_box_error if d is not None else None}


def cut_short(r: WorkloadResult) -> str | None:
    """Why run `r` did not get its own time, when a budget (the whole run's, the submission's) was spent before it
    started or while it ran; None when it ended by itself or at its own limits, or was skipped after too many runs
    hung (which counts as a time-out of the submission's own, as the runs that hung)."""
    if r.status == "not_run" and not r.cause.startswith(SKIPPED_AFTER_HANGS):
        return f"not reached: {r.cause.removeprefix('not_run: ')}"
    if r.status == "timeout" and r.limit in ("budget", "deadline", "run"):
        return f"cut short: {r.cause.removeprefix('timeout: ')}"
    return None


def judge_case(case: Case, observed: dict[str, Any], twin: dict[str, Any] | None,
               mutated: dict[str, Any] | None, kept: Sequence[Kept] | None = None,
               pair: Pair | None = None) -> dict[str, Finding | None]:
    """The first finding of each check on one case (None: it passed), in the order `check` judges a workload
    (conformance/checks/workload.py): hygiene's own, what the returned values showed at the end (`kept`), the
    fresh-dict probe, the two-instance probe (`pair`)."""
    if case.machine_steps is not None:
        return {"stateful": stateful(case, observed)}
    out: dict[str, Finding | None] = {}
    for name, judge in (("differential", checkers.differential), ("invariants", whitebox.invariants),
                        ("liveness", checkers.liveness), ("hygiene", checkers.hygiene)):
        found = judge(case.workload, observed)
        out[name] = found[0] if found else None
    if kept is not None and out["hygiene"] is None and observed["stop"] == "done":
        out["hygiene"] = history.judge_kept(kept)
    if mutated is not None and out["hygiene"] is None:
        found = probes.judge_cleared(observed, mutated)  # a hang there is a time-out, as in check
        out["hygiene"] = found[0] if found else None
    if pair is not None and out["hygiene"] is None:
        found = history.judge_instances(history.other_workload(case.workload), observed, *pair)
        out["hygiene"] = found[0] if found else None
    if case.golden is not None:
        found = probes.judge_golden(case.golden, observed)
        out["golden"] = found[0] if found else None
    if twin is not None:
        found = probes.judge_equivalence(case.workload, observed, twin)
        out["equivalence"] = found[0] if found else None
    return out


def stateful(case: Case, observed: dict[str, Any]) -> Finding | None:
    """The stateful check on one run of its state machine, within the steps it took (machine_steps), by the rule
    `check` applies to the same run (conformance/checks/machine_run.py)."""
    assert case.machine_steps is not None
    return machine_finding(case.workload, observed, case.machine_steps)


# Verdicts by the digests of the reports they were computed from (conformance.sandbox.memo): a case's verdict is
# a function of its workload and its runs' reports, so equal digests give equal verdicts.
VERDICTS: Memo[dict[str, Finding | None]] = Memo(200_000)


EXPLORED: Memo[tuple[str | None]] = Memo(200_000)  # exploration lines, keyed the same way


def _run_key(r: WorkloadResult) -> bytes:
    return digest(r.digest, r.status.encode(), r.cause.encode())


def explored(workload: Workload, r: WorkloadResult) -> str | None:
    """The exploration finding of one generated workload's run, as a line (None: none), from the memo when
    the same report was read before: like a verdict, it is a function of the workload and the report."""
    key = digest(b"explore", _run_key(r)) if r.digest else b""
    known = EXPLORED.get(key) if key else None
    if known is not None:
        return known[0]
    observed, line = observed_trace(workload, r), None
    for judge in (checkers.differential, checkers.liveness, checkers.hygiene):
        f = judge(workload, observed)
        if f:
            line = (f"exploration: {len(workload.requests)} requests, {workload.config}: [{f[0].check} {f[0].rule}] "
                    f"{f[0].message}")
            break
    if key:
        EXPLORED.put(key, (line,))
    return line


class Traces(Protocol):
    """Observed traces by run index: a list, or Observations."""

    def __getitem__(self, index: int) -> dict[str, Any]: ...


class Joined:
    """The observed traces of several sandboxed runs' cases as one list: case i of the whole grade is case i of
    the first run, then case i - n of the next (n cases in the first), and so on."""

    def __init__(self, views: Sequence[Observations], counts: Sequence[int]) -> None:
        self.where = [(view, local) for view, n in zip(views, counts, strict=True) for local in range(n)]

    def __getitem__(self, index: int) -> dict[str, Any]:
        view, local = self.where[index]
        return view[local]


class Observations:
    """The observed traces of one sandboxed run, each made when first asked for: most are never needed."""

    def __init__(self, runs: Sequence[Workload], results: Sequence[WorkloadResult], limit: float = 0.0) -> None:
        self.runs, self.results = runs, results
        self.limit = limit  # CPU seconds a run may take: instances together that hang where alone they are quick fail
        self._made: dict[int, dict[str, Any]] = {}
        self._keys: dict[int, bytes] = {}  # _run_key of each run, made once (a run's note and verdict both read it)

    def key(self, index: int) -> bytes:
        if index not in self._keys:
            self._keys[index] = _run_key(self.results[index])
        return self._keys[index]

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, index: int) -> dict[str, Any]:
        if index not in self._made:
            self._made[index] = observed_trace(self.runs[index], self.results[index])
        return self._made[index]

    def notes(self) -> list[str]:
        """The runs' notes, each once, in the order the runs gave them: the first run's white-box note (which
        attribute was missing: the runs' words differ only by the sequence they name), then every value read
        although not of docs/api.md's types, each once, as check's report lists them."""
        white: str | None = None
        typed: dict[str, None] = {}
        for r in self.results:
            d = r.trace
            if d is None:
                continue
            if white is None and d.note and d.white_box_error is None:
                white = d.note
            typed.update(dict.fromkeys(d.notes))
        return [*([white] if white else []), *typed]

    def judge(self, case: Case, index: int) -> dict[str, Finding | None]:
        """judge_case on the case at `index`, from the memo when every run it reads was reported before."""
        runs = (index, case.twin, case.mutated, case.paired, case.alone, case.group, *case.lanes_alone)
        parts = [i for i in runs if i is not None]
        if not all(self.results[i].digest for i in parts) or any(self.results[i].hung for i in parts):
            return self._judge(case, index)  # a hang's verdict reads the runs' CPU time, which no report digest holds
        key = digest(case.vector_id.encode(), bytes([i is None for i in runs]), *(self.key(i) for i in parts))
        known = VERDICTS.get(key)
        if known is None:
            known = self._judge(case, index)
            VERDICTS.put(key, known)
        return dict(known)

    def _judge(self, case: Case, index: int) -> dict[str, Finding | None]:
        if case.group is not None:  # schedulers alive at once: H.instances alone, as `check` judges a group
            others = self.results[case.group].group  # () when the child sent no trace (a crash, a time-out)
            together = [self[case.group], *(observed_trace(w, others[i]) if i < len(others) else None
                                            for i, w in enumerate(case.lanes[1:]))]
            found = history.judge_group(case.lanes, [self[i] for i in case.lanes_alone], together)[0]
            return {"hygiene": found or self.hung_together(case.group, sorted(set(case.lanes_alone)),
                                                           f"with {len(case.lanes)} schedulers alive at once",
                                                           case.lanes)}
        trace = self.results[index].trace
        out = judge_case(case, self[index], None if case.twin is None else self[case.twin],
                         None if case.mutated is None else self[case.mutated],
                         trace.kept if trace is not None else None, self.pair(case))
        if out.get("hygiene") is None and case.paired is not None and case.alone is not None:
            out["hygiene"] = self.hung_together(case.paired, [index, case.alone],
                                                "with a second instance interleaved call by call")
        return out

    def not_reached(self, case: Case, index: int, verdict: dict[str, Finding | None]) -> dict[str, str]:
        """The checks `verdict` fails only because a run of the case was never reached, each with why. The case
        still fails them (a submission that spends its budget earns nothing for what it did not run), but it is
        no counterexample: replayed, it shows nothing. When the case's own run was reached, a check fails for
        want of a probe's run if the case, judged without the probe runs never reached, passes it."""
        failing = [c for c, f in verdict.items() if f is not None]
        own = cut_short(self.results[index])
        if own is not None or not failing:
            return dict.fromkeys(failing, own) if own is not None else {}
        probed = (case.twin, case.mutated, case.paired, case.alone, case.group, *case.lanes_alone)
        missed = [i for i in probed if i is not None and cut_short(self.results[i]) is not None]
        if not missed:
            return {}
        pair_missed = case.paired in missed or case.alone in missed
        group_missed = case.group in missed or any(i in missed for i in case.lanes_alone)
        blind = replace(case, twin=None if case.twin in missed else case.twin,
                        mutated=None if case.mutated in missed else case.mutated,
                        paired=None if pair_missed else case.paired, alone=None if pair_missed else case.alone,
                        group=None if group_missed else case.group)  # its lane's own run, judged as any case's
        again = self._judge(blind, index)
        why = cut_short(self.results[missed[0]])
        assert why is not None
        return {c: why for c in failing if again.get(c) is None}

    def hung_together(self, together: int, alone: list[int], what: str, lanes: Sequence[Workload] = ()
                      ) -> Finding | None:
        """history.hung_together on run `together`, whose instances ran alone in the runs `alone` (the first: the
        case's own), under the CPU limit that run had (a group's, `lanes`, counts every scheduler's requests). A run
        skipped after too many runs timed out counts as a time-out, as the rest of such a run does
        (run_corpus_sandboxed); one stopped by a wall clock (the workload's, the run's, the submission's) or never
        reached is inconclusive: a loaded machine does that to a quick run too. One the submission's CPU budget
        never reached, or cut short, is a time-out, as its own runs are: only its own work spends that budget (a
        submission burning it where its instances first meet hid their bug behind an inconclusive run)."""
        r = self.results[together]
        if self.results[alone[0]].status != "ok":
            return None
        if r.status == "not_run" and r.cause.startswith(SKIPPED_AFTER_HANGS):
            return Finding("hygiene", "H.timeout", 1, "run", f"{what}, the run was {r.cause.removeprefix('not_run: ')}"
                           " (each such run that hangs or is skipped counts as a time-out)")
        if r.limit == "budget" and r.status in ("not_run", "timeout"):
            return Finding("hygiene", "H.timeout", 1, "run", f"{what}, the run did not run to its end: {cut_short(r)} "
                           "(the CPU the submission spent, here or before: each run it leaves no time counts as a "
                           "time-out)")
        if not r.hung_by_itself or any(self.results[i].status != "ok" for i in alone):
            return None
        requests = sum(len(w.requests) for w in lanes) if lanes else len(self.runs[together].requests)
        return history.hung_together(self[together], sum(self.results[i].seconds for i in alone),
                                     cpu_scaled(self.limit, requests), what)

    def pair(self, case: Case) -> Pair | None:
        """The traces of a case's two-instance probe: its instance beside the second, the second (None: it never
        ran, the first having failed before), and the second alone."""
        if case.paired is None or case.alone is None:
            return None
        beside = self.results[case.paired].beside
        other = self.runs[case.alone]
        return (self[case.paired], None if beside is None else observed_trace(other, beside), self[case.alone])
