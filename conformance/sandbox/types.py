"""Inputs and results of a sandboxed run: Limits, WorkloadResult, SandboxResult.

Kept apart from conformance.sandbox.run so that checkers and reports can read results without the
process machinery. Every ``cause`` is a sentence for the report; every ``status`` is one of STATUSES.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conformance.sandbox.isolation import Isolation
from conformance.sandbox.protocol import Decoded
from spec.trace import Workload, workload_to_json

STATUSES = (
    "ok",  # every request finished; the trace is ready to be judged
    "stalled",  # the step cap (conformance.drivers run_cap) was reached unfinished, or 64 empty batches came in a row
    "exception",  # the submission raised (any BaseException) inside a call
    "memory",  # the submission raised MemoryError (the address-space limit)
    "protocol",  # a returned value broke docs/api.md's shape, or the child's report was malformed
    "timeout",  # the workload ran past its wall-clock limit
    "cpu_limit",  # the workload ran past its CPU-time limit (SIGXCPU)
    "exit",  # the process exited in the middle of the workload (os._exit, sys.exit at import)
    "signal",  # the process was killed by a signal (segfault, SIGKILL from the hard CPU limit)
    "load_error",  # the module could not be loaded (import error, refused import, missing class)
    "not_run",  # the run's or the submission's time budget was spent before this workload started
    "abandoned",  # not run: the submission's restarts were all spent on children that crashed
    "sandbox_error",  # the sandbox itself failed to start: a fault of the grader, not the submission
)


def child_json(w: Workload) -> dict[str, Any]:
    """A workload as a child receives it: with no name and no tag, so nothing but its content tells one case from
    another (a held-out case from a public one, a golden case from a probe's) to the submission."""
    return {**workload_to_json(w), "name": "", "tags": []}


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """A run planned beside the plain ones (a bare Workload: a case's own run, white box): a probe, schedulers alive
    at once, or a run on a copy of the submission loaded anew. Frozen, so a class's runs are prepared once."""

    workload: Workload
    probe: str = ""  # the probes it is, joined by "+" (child.PROBES); told on the probe channel, never in its JSON
    group: tuple[Workload, ...] | None = None  # the other schedulers alive at once, all judged by their calls alone
    #                                             (black box); (): this one alone, black box
    fresh: bool = False  # on a copy of the submission loaded anew, which the runs after it use (grading/confirm.py)

    def to_json(self) -> dict[str, Any]:
        """The run as the child reads it (conformance/sandbox/child.py ``drive``)."""
        out = child_json(self.workload)
        if self.group is not None:
            out["group"] = [child_json(w) for w in self.group]
        if self.fresh:
            out["fresh"] = True
        return out


CPU_REQUESTS = 512  # a run may take workload_cpu_seconds once more for each this many requests (Limits.cpu_for)


def cpu_scaled(seconds: float, requests: int) -> float:
    """The CPU seconds of a run of `requests` requests (its schedulers' together) whose base limit is `seconds`."""
    return seconds * (1 + requests // CPU_REQUESTS)


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-workload and whole-run limits. The defaults suit grading; tests pass tighter ones."""

    workload_seconds: float = 10.0  # per workload: a child idle this long times out; hard wall limit is
    #                                  WALL_FACTOR times this (+ WALL_SLACK), rerun once before it counts
    workload_cpu_seconds: int = 10  # CPU time of the whole process tree per workload (cpu_for: more for a large one)
    startup_seconds: float = 5.0  # the same two limits for starting the child and importing the submission
    run_seconds: float = 600.0  # wall clock for this call, all children together
    cpu_seconds: int = 600  # hard RLIMIT_CPU of one child process
    memory_bytes: int = 1 << 30  # RLIMIT_AS of the child
    file_bytes: int = 1 << 20  # RLIMIT_FSIZE: the largest file the child may write
    open_files: int = 64  # RLIMIT_NOFILE
    processes: int = 0  # RLIMIT_NPROC: new processes or threads the child may start (a scheduler needs none;
    #                     a thread's CPU depends on scheduling luck); not enforced for root
    output_bytes: int = 1 << 20  # bytes of stdout and of stderr kept; the rest is counted and dropped
    report_bytes: int = 32 << 20  # bytes of JSON reports accepted from one child (one message: LINE_MAX)
    tmp_bytes: int = 64 << 20  # size of the child's private /tmp and of its /dev/shm (namespace levels)
    white_box: bool = True  # read blocks_used, queues and sequence fields after every call
    isolation: str | None = None  # force a level of isolation.LEVELS; None: the best available
    hide: tuple[str, ...] = ()  # more directories to cover with an empty tmpfs (e.g. the other submissions)
    max_timeouts: int | None = None  # after this many workloads hang, the rest are not run (None: no such cut)
    one_process: bool = True  # refuse the submission every new process (oneproc.py); off only to test the
    #                           defences that stand in where the kernel refuses the filter (rlimits, sweeps)

    def cpu_for(self, data: Mapping[str, Any]) -> int:
        """The CPU seconds a run of workload JSON `data` may take: workload_cpu_seconds, once more for every
        CPU_REQUESTS requests it holds (a group's schedulers' together). A correct scheduler written for clarity
        (immutable state, every step copied) took 1.5 s on a two-step workload of 2,048 requests, where one of a
        few requests takes milliseconds: one flat limit either let a hang run long or cut a correct one."""
        return int(cpu_scaled(self.workload_cpu_seconds,
                              len(data["requests"]) + sum(len(g["requests"]) for g in data.get("group", ()))))

    def __post_init__(self) -> None:
        if type(self.one_process) is not bool:
            raise ValueError(f"Limits.one_process must be True or False, got {self.one_process!r}")
        for name in ("workload_seconds", "startup_seconds", "run_seconds"):
            value = getattr(self, name)
            if type(value) not in (int, float) or not value > 0:
                raise ValueError(f"Limits.{name} must be a number > 0, got {value!r}")
        for name in ("workload_cpu_seconds", "cpu_seconds", "memory_bytes", "file_bytes", "open_files",
                     "processes", "output_bytes", "report_bytes"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ValueError(f"Limits.{name} must be an int >= 0, got {value!r}")
        if self.max_timeouts is not None and (type(self.max_timeouts) is not int or self.max_timeouts < 1):
            raise ValueError(f"Limits.max_timeouts must be an int >= 1 or None, got {self.max_timeouts!r}")
        if any(type(p) is not str or not p.startswith("/") for p in self.hide):
            raise ValueError(f"Limits.hide must hold absolute paths, got {self.hide!r}")


@dataclass(frozen=True, slots=True)
class WorkloadResult:
    """What happened to one workload: a status, a sentence, and the trace observed up to the end."""

    index: int  # position in the workloads given to run_in_sandbox
    name: str
    status: str  # one of STATUSES
    cause: str  # for the report, e.g. "timeout: workload 3 ran past 2.0 s of wall time; its process tree was killed"
    trace: Decoded | None = None  # the child's report, validated: None when it sent none (a timeout, a crash)
    seconds: float = 0.0  # CPU seconds of the child's whole process tree on this workload (load-independent)
    wall_seconds: float = 0.0  # wall time the parent measured (depends on the machine's load)
    digest: bytes = b""  # of the report line and the workload it was read from (sandbox.memo); b"" if none
    beside: WorkloadResult | None = None  # a two-instance probe: how its second instance's run ended, and its trace
    group: tuple[WorkloadResult, ...] = ()  # a group's other schedulers: how each one's run ended, and its trace
    limit: str = ""  # the parent's limit that stopped it, or that it was not reached within: cpu, idle, wall, run,
    # budget (the submission's CPU or restarts: its own doing) or deadline (the submission's wall time); "" for none

    @property
    def steps(self) -> tuple[dict[str, Any], ...]:
        """The observed trace's steps (docs/trace-format.md) the child reported; () when it reported none."""
        return self.trace.steps if self.trace is not None else ()

    @property
    def error(self) -> dict[str, Any] | None:
        """The failing call the child reported, for "exception", "memory" and child-detected "protocol"."""
        return self.trace.error if self.trace is not None else None

    @property
    def killed(self) -> bool:
        """Whether a SIGKILL ended it: the hard CPU limit's."""
        return self.status == "signal" and "SIGKILL" in self.cause

    @property
    def hung(self) -> bool:
        """Whether it ended at a time limit, or was not run for lack of time."""
        return self.killed or self.status in ("timeout", "cpu_limit", "not_run")

    @property
    def hung_by_itself(self) -> bool:
        """Whether it ended at a limit no load on the machine brings a run to: its CPU time (the parent's limit,
        SIGXCPU, the hard limit's SIGKILL) or idleness (no process of it running or runnable). A wall-clock
        limit, the run's or the submission's, is also reached by a quick run starved on a loaded machine."""
        return self.killed or self.status == "cpu_limit" or self.limit == "idle"


@dataclass(frozen=True, slots=True)
class LoadFailure:
    """Why the module could not be loaded, structured for reports (every string bounded by the parent)."""

    kind: str  # "exception", "refused_import", "missing_api", "syntax"; the parent's: "timeout", "ended", "protocol"
    exc_type: str  # e.g. "ModuleNotFoundError", "SyntaxError"; "" for timeout / ended
    message: str  # the exception's message, at most 500 characters
    file: str | None = None  # SyntaxError: the file relative to the submission (e.g. "p07_scheduler.py")
    line: int | None = None  # SyntaxError: 1-based line number
    text: str | None = None  # SyntaxError: the offending line's text, at most 200 characters, no newline
    column: int | None = None  # SyntaxError: 1-based column (Python's offset)


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """A whole sandboxed run. The parent wrote every field; the child only supplied validated observations."""

    isolation: Isolation
    workloads: tuple[WorkloadResult, ...]
    load_error: str | None  # why the module could not be loaded, if it could not
    stdout: str  # the first Limits.output_bytes of the child's stdout, all children together
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    output_bytes: int  # stdout + stderr bytes the child wrote, including the dropped ones
    refused_imports: tuple[str, ...]  # module names the import hook refused
    children: int  # child processes started (one more after every timeout or crash)
    survivors: int  # processes of the run still found alive after teardown (0 unless isolation failed)
    seconds: float
    notes: tuple[str, ...] = ()
    load_failure: LoadFailure | None = None  # the structured form of load_error
    cpu_seconds: float = 0.0  # CPU seconds of every child's process tree together
    child_uid: int | None = None  # the uid the child reported (before the submission ran)
    child_cap_eff: int | None = None  # the child's effective capability set, read by itself from /proc
    wire: bool = False  # the submission was a wire program (a folder with a wire.toml), not a module
    one_process: bool = False  # the kernel refused the submission every new process in every child (oneproc.py)

    def causes(self) -> list[str]:
        """One line per workload that did not end "ok", plus output truncation: what a report shows."""
        lines = [f"workload {w.index} ({w.name or 'unnamed'}): {w.cause}" for w in self.workloads if w.status != "ok"]
        for stream, cut in (("stdout", self.stdout_truncated), ("stderr", self.stderr_truncated)):
            if cut:
                lines.append(f"{stream} truncated: the submission wrote {self.output_bytes} bytes of output")
        return lines
