"""The parent's bookkeeping of one sandboxed run: results per workload, output caps, and how a child ended.

Kept apart from the process handling (conformance.sandbox.watch) so that every sentence a report
shows is written in one place. Nothing here reads the child's messages unchecked: traces go through
conformance.sandbox.protocol, load errors through ``load_failure``.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from conformance.beside import beside_workload
from conformance.sandbox import protocol
from conformance.sandbox.child import BESIDE, MUTATE, REPORT_MAX, RESAMPLE, report_max
from conformance.sandbox.isolation import Isolation
from conformance.sandbox.memo import Memo, item_key
from conformance.sandbox.protocol import Decoded
from conformance.sandbox.types import Limits, LoadFailure, WorkloadResult
from spec.loop import STALL_STEPS
from spec.trace import Workload, workload_to_json

Item = tuple[Workload, dict[str, Any], int, int]  # workload, its JSON, its step cap, its probes' bits (child.PROBES)
LOAD_KINDS = ("exception", "refused_import", "missing_api", "syntax", "wire")


@dataclass(frozen=True, slots=True)
class Trace:
    """A trace message as validated: its workload (local index), refused imports, and the decoded trace."""

    workload: int
    refused: tuple[str, ...]
    decoded: Decoded


TRACES: Memo[Trace] = Memo(96 << 20)  # by line and item digest (conformance.sandbox.memo); weight: line bytes


@lru_cache(maxsize=1 << 14)
def workload_key(workload: Workload, step_cap: int, white_box: bool) -> bytes:
    """item_key of a workload, made once: a class runs the same workloads on every submission."""
    return item_key(workload_to_json(workload), step_cap, white_box)


class Run:
    """Mutable bookkeeping of one run_in_sandbox call; turned into a SandboxResult at the end."""

    def __init__(self, iso: Isolation, limits: Limits, items: list[Item]) -> None:
        self.iso, self.limits, self.items = iso, limits, items
        self.results: dict[int, WorkloadResult] = {}
        self.streams = {"stdout": bytearray(), "stderr": bytearray()}
        self.truncated = {"stdout": False, "stderr": False}
        self.output_bytes = 0
        self.refused: list[str] = []
        self.children = self.survivors = 0
        self.load_error: str | None = None
        self.load_failure: LoadFailure | None = None
        self.notes: list[str] = []
        self.reruns: set[int] = set()  # workloads (-1: the import) already rerun after a wall-clock timeout
        self.cpu = 0.0  # CPU seconds of every finished child's tree
        self.uid: int | None = None
        self.cap_eff: int | None = None
        self.one_process: bool | None = None  # every child so far was refused new processes (None: none loaded)
        self.budget_spent = False
        self._keys: dict[int, bytes] = {}
        self._extra: list[int] | None = None

    def key(self, index: int) -> bytes:
        """The digest of what reading workload `index`'s trace depends on besides the line (memo keys)."""
        if index not in self._keys:
            workload, data, cap, probe = self.items[index]
            self._keys[index] = (item_key(data, cap, False) if "group" in data  # a group: every lane's workload
                                 else workload_key(workload, cap, reports_state(self.limits.white_box, data, probe))
                                 ) + bytes([probe])
        return self._keys[index]

    def extra_bytes(self, index: int) -> int:
        """What workload `index`'s report may take past the usual allowance: ids of thousands of characters make
        every step longer (child.report_max); the parent allows a message and a child's reports as much more."""
        if self._extra is None:
            self._extra = [report_max(sum(len(r.seq_id) for r in item[0].requests)) - REPORT_MAX
                           for item in self.items]
        return self._extra[index] if index < len(self._extra) else 0

    def capture(self, stream: str, data: bytes) -> None:
        """Keep at most output_bytes of each stream; count everything."""
        self.output_bytes += len(data)
        kept = self.streams[stream]
        room = self.limits.output_bytes - len(kept)
        kept += data[:max(room, 0)]
        if len(data) > room:
            self.truncated[stream] = True

    def finish(self, index: int, status: str, cause: str, cpu: float = 0.0, wall: float = 0.0, **more: Any) -> None:
        self.results[index] = WorkloadResult(index, self.items[index][0].name, status, cause,
                                             seconds=round(max(cpu, 0.0), 2), wall_seconds=round(wall, 3), **more)

    def fail_load(self, failure: LoadFailure) -> None:
        self.load_failure = failure
        self.load_error = ": ".join(x for x in (failure.kind, failure.exc_type, failure.message) if x)


def text(value: Any, limit: int) -> str | None:
    return protocol.clean(value[:limit]) if type(value) is str else None


def number(value: Any) -> int | None:
    return value if type(value) is int and 0 <= value < 1 << 31 else None


def load_failure(error: Any) -> LoadFailure:
    """A child's load_error record, every field checked and bounded (anything else: a generic failure)."""
    if type(error) is not dict:
        return LoadFailure("exception", "?", "the child sent a load_error without detail")
    kind = str(error["kind"]) if error.get("kind") in LOAD_KINDS else "exception"
    failure = LoadFailure(kind, text(error.get("exc_type"), 200) or "?", text(error.get("message"), 500) or "")
    if kind == "syntax":
        line = text(error.get("text"), 200)
        return LoadFailure(kind, failure.exc_type, failure.message, text(error.get("file"), 200),
                           number(error.get("line")), line.replace("\n", " ") if line else None,
                           number(error.get("column")))
    return failure


def reports_state(white_box: bool, data: dict[str, Any], probe: int) -> bool:
    """Whether a run's report holds the scheduler's state (white box): only a case's own run does. A probe (the
    fresh-dict probe, a second instance beside) and a group's runs are judged by their calls alone, as `check` runs
    them (child.run_lane stops reading state once the fresh-dict probe is asked for)."""
    return white_box and not probe & (BESIDE | MUTATE) and "group" not in data


def read_trace(run: Run, index: int, message: dict[str, Any]) -> Trace:
    """Validate a trace message of workload `index` (raises protocol.Malformed)."""
    _, data, cap, probe = run.items[index]
    refused = message.get("refused")
    names = tuple(protocol.clean(r[:100]) for r in refused[:20] if type(r) is str) if type(refused) is list else ()
    workload = message.get("workload")
    white_box = reports_state(run.limits.white_box, data, probe)
    decoded = protocol.trace(message, data, cap, white_box, bool(probe & RESAMPLE))
    if "beside" in message:
        if not probe & BESIDE or type(message["beside"]) is not dict:
            raise protocol.Malformed("trace.beside is sent only for a two-instance probe, as an object")
        decoded = replace(decoded, beside=protocol.trace(message["beside"], beside_workload(data), cap, False))
    lanes = data.get("group", [])
    if "group" in message or lanes:
        sent = message.get("group")
        if type(sent) is not list or len(sent) != len(lanes) or any(type(t) is not dict for t in sent):
            raise protocol.Malformed(f"trace.group must be sent for a group's run only, as {len(lanes)} objects")
        decoded = replace(decoded, group=tuple(protocol.trace(t, w, cap, False)
                                               for t, w in zip(sent, lanes, strict=True)))
    return Trace(workload if type(workload) is int else -1, names, decoded)


def judge_trace(run: Run, index: int, trace: Trace, cpu: float, wall: float, digest: bytes = b"") -> None:
    """Turn a validated trace into the workload's result; `digest` names the bytes it was read from. A two-instance
    probe's second instance gets a result of its own, in the same words, so it reads as a run alone would."""
    decoded = trace.decoded
    beside = None
    if decoded.beside is not None:
        beside = WorkloadResult(index, run.items[index][0].name, *outcome(run, index, decoded.beside),
                                trace=decoded.beside)
    group = tuple(WorkloadResult(index, run.items[index][0].name, *outcome(run, index, t), trace=t)
                  for t in decoded.group)
    run.finish(index, *outcome(run, index, decoded), cpu, wall, trace=decoded, digest=digest, beside=beside,
               group=group)


def outcome(run: Run, index: int, decoded: Decoded) -> tuple[str, str]:
    """The status and cause of a run that sent this trace."""
    cap, error = run.items[index][2], decoded.error
    if decoded.stop == "done":
        return "ok", "ok"
    if decoded.stop == "bound" and len(decoded.steps) < cap:
        return "stalled", (f"stalled: {STALL_STEPS} empty batches in a row after every request arrived, up to step "
                           f"{len(decoded.steps)}; the submission stopped making progress")
    if decoded.stop == "bound":
        return "stalled", (f"stalled: requests still unfinished after the step cap of {cap} steps (the liveness "
                           "bound, or far past the spec's last step when that bound is too large to run to)")
    assert error is not None
    where = f"in {error['call']} at step {error['step']}"
    if error["kind"] == "bad_result":
        return "protocol", f"protocol: {error['message']} ({where})"
    if error["kind"] == "MemoryError":
        return "memory", f"memory: MemoryError {where}; the child may map at most {run.limits.memory_bytes >> 20} MB"
    return "exception", f"exception: {error['kind']} raised {where}: {error['message']}"


def signal_name(sig: int) -> str:
    """SIGSEGV, SIGRTMIN+3, or the number: any int, never an exception."""
    try:
        return signal.Signals(sig).name
    except ValueError:
        if signal.SIGRTMIN <= sig <= signal.SIGRTMAX:
            return f"SIGRTMIN+{sig - signal.SIGRTMIN}"
        return f"signal {sig}"


def ended(run: Run, index: int, exit_info: dict[str, Any] | None, crash: str | None, cpu: float,
          wall: float) -> None:
    """The worker went away in the middle of workload `index`: name how."""
    sig = exit_info.get("signal") if exit_info else None
    code = exit_info.get("code") if exit_info else None
    if type(sig) is int and sig == signal.SIGXCPU:
        run.finish(index, "cpu_limit", f"cpu_limit: workload {index} used more than "
                   f"{run.limits.cpu_for(run.items[index][1])} s of CPU time (SIGXCPU)", cpu, wall)
    elif type(sig) is int:
        hint = " (the hard CPU limit or the memory limit)" if sig == signal.SIGKILL else ""
        run.finish(index, "signal", f"signal: the process was killed by {signal_name(sig)}{hint} during workload "
                   f"{index}", cpu, wall)
    elif type(code) is int:
        extra = f"; the harness reported: {crash}" if crash else ""
        run.finish(index, "exit", f"exit: the process exited with code {code} during workload {index}; every call "
                   f"must return (os._exit ends the whole process){extra}", cpu, wall)
    else:
        run.finish(index, "signal", f"signal: the sandbox ended during workload {index} without a report", cpu, wall)


def stopped(run: Run, index: int, why: str, cpu: float, wall: float) -> None:
    """The parent stopped workload `index` at a limit: `why` is cpu, idle, wall, run, budget (the submission's
    CPU or restarts) or deadline (the submission's wall time)."""
    lim = run.limits
    if why == "cpu":
        run.finish(index, "cpu_limit", f"cpu_limit: workload {index} used more than "
                   f"{lim.cpu_for(run.items[index][1])} s of CPU time (its whole process tree), caught while running "
                   f"or when it ended ({run.iso.level})",
                   cpu, wall, limit=why)
    elif why == "idle":
        run.finish(index, "timeout", f"timeout: workload {index} made no progress for "
                   f"{idle_limit(lim.workload_seconds):g} s "
                   "(its processes were sleeping or blocked, none running); the tree was killed", cpu, wall, limit=why)
    elif why == "wall":
        run.finish(index, "timeout", f"timeout: workload {index} ran past {wall_limit(lim.workload_seconds):g} s "
                   "of wall time twice, in two fresh children; the tree was killed", cpu, wall, limit=why)
    elif why == "run":
        run.finish(index, "timeout", f"timeout: workload {index} ran past the whole run's {lim.run_seconds} s; "
                   f"its process tree was killed ({run.iso.level})", cpu, wall, limit=why)
    else:
        run.finish(index, "timeout", f"timeout: {budget_text(run)}; workload {index} was stopped", cpu, wall,
                   limit=why)


def budget_text(run: Run) -> str:
    from conformance.sandbox.budget import current

    budget = current()
    return budget.why() if budget else "the submission's total budget was spent"


WALL_FACTOR, WALL_SLACK = 10.0, 2.0  # the hard wall limit of a phase: a safety net far above the CPU limit


IDLE_SECONDS = 0.5  # a workload whose tree runs nothing and sends no whole message this long is sleeping: a correct
#                    submission computes and never waits, so sleeping "just under the limit" gains nothing


def idle_limit(workload_seconds: float) -> float:
    return min(workload_seconds, IDLE_SECONDS)


def wall_limit(seconds: float) -> float:
    return WALL_FACTOR * seconds + WALL_SLACK


def finish_rest(run: Run, budget: str | None, crashes: bool = False, spent: str = "budget") -> None:
    """Every workload without a result: a load error, or not reached within the run's or submission's budget
    (`crashes`: the budget that ran out is the restarts, spent on children that crashed; `spent`: the limit that
    ran out, as stopped() names it)."""
    for rest in range(len(run.items)):
        if rest in run.results:
            continue
        if run.load_error is not None:
            run.finish(rest, "load_error", f"load_error: {run.load_error}")
        elif budget is not None and crashes:
            run.finish(rest, "abandoned", f"abandoned: {budget}; the children crashed again and again")
        elif budget is not None:
            run.finish(rest, "not_run", f"not_run: {budget}", limit=spent)
        else:
            run.finish(rest, "not_run", f"not_run: the whole run's {run.limits.run_seconds} s were spent first",
                       limit="run")
