"""Run an untrusted submission on whole workloads in a sandboxed child; the parent owns every verdict.

``run_in_sandbox(path, workloads, limits)`` (path: a module, or a folder with a wire.toml) starts
the child program (boot.py, which runs the driver of child.py) at the best isolation level the
machine allows (conformance.sandbox.isolation): a fresh root holding only the runtime and a copy of
the submission, no capabilities, an unprivileged uid. The child drives each workload itself and
streams one JSON line per workload on a pipe; the parent validates every field
(conformance.sandbox.protocol), caps what it keeps, enforces CPU and wall-clock limits on the whole
process tree (conformance.sandbox.watch), and restarts a fresh child after a timeout or crash so
that one bad workload costs one workload. It never raises for anything a submission does. The
protocol and the error table are in docs/sandbox.md.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from conformance.drivers import run_cap
from conformance.sandbox.budget import current
from conformance.sandbox.child import probe_code
from conformance.sandbox.isolation import detect
from conformance.sandbox.program import WIRE_PROCESSES, WireProgram, is_wire, read_wire_folder
from conformance.sandbox.record import Item, Run, finish_rest
from conformance.sandbox.types import Limits, LoadFailure, PlannedRun, SandboxResult, child_json
from conformance.sandbox.watch import run_child
from spec.trace import Workload

__all__ = ["prepare", "run_in_sandbox"]
SUBMISSION_MAX = 1 << 20  # bytes of a submission's module


def prepare(run: Workload | PlannedRun) -> Item:
    """A run, its JSON for the child, its step cap (conformance.drivers run_cap, as `check` runs it), and its
    probes' bits (child.probe_code).

    A probe ("mutate": the child changes every dict schedule() returns before calling update(); "beside": a second
    instance with another config runs beside, call by call; "resample": a position sampled again gets a new token;
    several joined by "+") never goes into the run's JSON: the child learns it from the probe channel, after the
    submission's first schedule() of the workload returned. A group of schedulers alive at once is open instead:
    the others' workloads are in the first's JSON, as "group", and all of them run black box, call by call, with
    the step cap of the slowest; an empty group is one scheduler alone, black box, as `check` runs the runs a probe
    is compared with. A fresh run is made on a copy of the submission loaded anew (conformance/grading/confirm.py).
    """
    if isinstance(run, Workload):
        return run, child_json(run), run_cap(run), 0
    cap = max(run_cap(w) for w in (run.workload, *(run.group or ())))
    return run.workload, run.to_json(), cap, probe_code(run.probe)


SKIPPED_AFTER_HANGS = "not_run: skipped after"  # how a run skipped after max_timeouts hangs is told (the rest count
# as time-outs: conformance/grading/observe.py)


def skip_after_hangs(run: Run, index: int, hangs: int) -> None:
    """The runs from `index` on are not run: `hangs` runs of the submission have hung (they count as time-outs)."""
    for rest in range(index, len(run.items)):
        run.finish(rest, "not_run", f"{SKIPPED_AFTER_HANGS} {hangs} runs timed out")


_prepared: dict[int, tuple[tuple[Workload | PlannedRun, ...], list[Item]]] = {}
PREPARED_KEPT = 4  # tuples of runs whose items are kept (a grade runs two: the corpus, the exploration)


def prepared(runs: Sequence[Workload | PlannedRun]) -> list[Item]:
    """prepare() of every run. A tuple's items are made once: its runs are frozen, and a class's runs are the same
    tuples for every submission (conformance.grading.judge)."""
    if not isinstance(runs, tuple):
        return [prepare(w) for w in runs]
    key = id(runs)
    if key not in _prepared or _prepared[key][0] is not runs:  # the tuple is held: its id is not reused
        while len(_prepared) >= PREPARED_KEPT:
            del _prepared[next(iter(_prepared))]
        _prepared[key] = (runs, [prepare(w) for w in runs])
    return list(_prepared[key][1])


def read_submission(path: str | Path) -> tuple[bytes | WireProgram, str | None]:
    """The module's bytes, read without following a symlink and only up to SUBMISSION_MAX; for a folder
    with a wire.toml, the program's files and command (conformance.sandbox.program)."""
    import os
    import stat

    if is_wire(Path(path)):
        program, problem = read_wire_folder(path)
        return (program, None) if program is not None else (b"", problem)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        return b"", f"cannot read the submission {str(path)!r}: {e.strerror}"
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            return b"", f"the submission {str(path)!r} is not a regular file"
        if info.st_size > SUBMISSION_MAX:
            return b"", f"the submission is {info.st_size} bytes, more than {SUBMISSION_MAX}; submit the module only"
        return f.read(SUBMISSION_MAX + 1)[:SUBMISSION_MAX], None


def run_in_sandbox(submission_path: str | Path, workloads: Sequence[Workload | PlannedRun],
                   limits: Limits | None = None, hung: int = 0) -> SandboxResult:
    """Run every workload (a plain one, or a PlannedRun: prepare) on the submission in sandboxed children and
    return what was observed.

    `hung`: the submission's runs that hung in an earlier sandboxed run of the same series; they count toward
    max_timeouts, so a series cut into several runs is cut after as many hangs as one run would be.
    Invalid workloads or limits are the caller's error and raise; nothing the submission does raises.
    Inside conformance.sandbox.budget.submission_budget, every call draws on the submission's budget.
    """
    limits = limits or Limits()
    begun = time.monotonic()
    submission, problem = read_submission(submission_path)
    if isinstance(submission, WireProgram):  # the program, and the threads its runtime starts
        limits = replace(limits, processes=max(limits.processes, WIRE_PROCESSES))
    items = prepared(workloads)
    run = Run(detect(limits.isolation), limits, items)
    if problem is not None:
        run.fail_load(LoadFailure("unreadable", "", problem))
        run.load_error = problem
    budget = current()
    deadline = min(begun + limits.run_seconds, budget.deadline if budget else float("inf"))
    index = 0
    if limits.max_timeouts is not None and hung >= limits.max_timeouts:
        skip_after_hangs(run, 0, hung)
        index = len(items)
    while index < len(items) and run.load_error is None and not run.budget_spent:
        if budget is not None and not budget.left():
            run.budget_spent = True
            break
        if time.monotonic() >= deadline:
            break
        if budget is not None and run.children:
            budget.restarts_used += 1  # this child replaces one that crashed or timed out
            if not budget.left():
                run.budget_spent = True
                break
        index = run_child(run, submission, index, deadline)
        hangs = hung + sum(r.hung for r in run.results.values())
        if limits.max_timeouts is not None and hangs >= limits.max_timeouts:
            skip_after_hangs(run, index, hangs)
            break
    finish_rest(run, budget.why() if run.budget_spent and budget else None,
                crashes=bool(run.budget_spent and budget and budget.restarts_spent()),
                spent=budget.spent_on() if budget is not None else "budget")
    return SandboxResult(
        run.iso, tuple(run.results[i] for i in range(len(items))), run.load_error,
        bytes(run.streams["stdout"]).decode(errors="replace"), bytes(run.streams["stderr"]).decode(errors="replace"),
        run.truncated["stdout"], run.truncated["stderr"], run.output_bytes, tuple(dict.fromkeys(run.refused)),
        run.children, run.survivors, round(time.monotonic() - begun, 4), tuple(dict.fromkeys(run.notes)),
        run.load_failure, round(run.cpu, 2), run.uid, run.cap_eff, isinstance(submission, WireProgram),
        run.one_process is True)
