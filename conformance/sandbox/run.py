"""Run an untrusted submission on whole workloads in a sandboxed child; the parent owns every verdict.

``run_in_sandbox(path, workloads, limits)`` starts the child program (boot.py, which runs the
driver of child.py) in a fresh directory holding a copy of the submission, with a scrubbed
environment, rlimits and the best isolation level the machine allows (conformance.sandbox.isolation).
The child drives each workload itself and streams one JSON line per workload on a pipe; the parent
validates every field (conformance.sandbox.protocol), caps output, enforces wall-clock limits, and
restarts a fresh child after a timeout or crash so that one bad workload costs one workload. It
never raises for anything a submission does. The protocol and the error table are in docs/sandbox.md.
"""

from __future__ import annotations

import json
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.sandbox import protocol
from conformance.sandbox.isolation import UID_BASE, Isolation, detect, kill_tree, prefix
from conformance.sandbox.types import Limits, SandboxResult, WorkloadResult
from spec.trace import Workload, liveness_bound, workload_from_json, workload_to_json

PROJECT = Path(__file__).resolve().parents[2]
REFUSED = ["spec", "impl", "conformance", "schedcheck", "tests"]
BOOT_SOURCE = Path(__file__).with_name("boot.py").read_text()
DRIVER_SOURCE = Path(__file__).with_name("child.py").read_text()
MODULE = "p07_scheduler.py"
RLIMITS = ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_CORE")


class Run:
    """Mutable bookkeeping of one run_in_sandbox call; turned into a SandboxResult at the end."""

    def __init__(self, iso: Isolation, limits: Limits, items: list[tuple[Workload, dict[str, Any], int]]) -> None:
        self.iso, self.limits, self.items = iso, limits, items
        self.results: dict[int, WorkloadResult] = {}
        self.streams = {"stdout": bytearray(), "stderr": bytearray()}
        self.truncated = {"stdout": False, "stderr": False}
        self.output_bytes = 0
        self.refused: list[str] = []
        self.children = self.survivors = 0
        self.load_error: str | None = None
        self.notes: list[str] = []

    def capture(self, stream: str, data: bytes) -> None:
        """Keep at most output_bytes of each stream; count everything."""
        self.output_bytes += len(data)
        kept = self.streams[stream]
        room = self.limits.output_bytes - len(kept)
        kept += data[:max(room, 0)]
        if len(data) > room:
            self.truncated[stream] = True

    def finish(self, index: int, status: str, cause: str, started: float, **more: Any) -> None:
        self.results[index] = WorkloadResult(index, self.items[index][0].name, status, cause,
                                             seconds=round(time.monotonic() - started, 4), **more)


PROBES = ("mutate",)  # "mutate": the child clears every dict schedule() returns before calling update()


def prepare(workload: Workload | Mapping[str, Any], limits: Limits) -> tuple[Workload, dict[str, Any], int]:
    """A workload, its JSON for the child, and its step cap (liveness bound + margin)."""
    w = workload if isinstance(workload, Workload) else workload_from_json(dict(workload))
    data = workload_to_json(w)
    if not isinstance(workload, Workload) and workload.get("probe") in PROBES:
        data["probe"] = workload["probe"]
    return w, data, liveness_bound(w.requests) + limits.step_margin


def judge_trace(run: Run, index: int, message: dict[str, Any], started: float) -> None:
    """Turn a validated trace message into the workload's result (raises protocol.Malformed)."""
    _, data, cap = run.items[index]
    steps, end, error = protocol.trace(message, data, cap, run.limits.white_box)
    if end == "finished":
        run.finish(index, "ok", "ok", started, steps=steps)
    elif end == "step_cap":
        run.finish(index, "stalled", f"stalled: requests still unfinished after the step cap of {cap} steps "
                   f"(liveness bound + {run.limits.step_margin}); the submission stopped making progress",
                   started, steps=steps)
    else:
        assert error is not None
        where = f"in {error.call} at step {error.step}"
        if error.kind == "protocol":
            status, cause = "protocol", f"protocol: {error.message} ({where})"
        elif error.exc_type == "MemoryError":
            status, cause = "memory", (f"memory: MemoryError {where}; the child may map at most "
                                       f"{run.limits.memory_bytes >> 20} MB")
        else:
            status, cause = "exception", f"exception: {error.exc_type} raised {where}: {error.message}"
        run.finish(index, status, cause, started, steps=steps, error=error)


def ended(run: Run, index: int, exit_info: dict[str, Any] | None, crash: str | None, started: float) -> None:
    """The worker went away in the middle of workload `index`: name how."""
    sig = exit_info.get("signal") if exit_info else None
    code = exit_info.get("code") if exit_info else None
    if type(sig) is int and sig == signal.SIGXCPU:
        run.finish(index, "cpu_limit", f"cpu_limit: workload {index} used more than "
                   f"{run.limits.workload_cpu_seconds} s of CPU time (SIGXCPU)", started)
    elif type(sig) is int:
        name = signal.Signals(sig).name if sig in signal.valid_signals() else str(sig)
        hint = " (the hard CPU limit or the memory limit)" if sig == signal.SIGKILL else ""
        run.finish(index, "signal", f"signal: the process was killed by {name}{hint} during workload {index}", started)
    elif type(code) is int:
        extra = f"; the harness reported: {crash}" if crash else ""
        run.finish(index, "exit", f"exit: the process exited with code {code} during workload {index}; every call "
                   f"must return (os._exit ends the whole process){extra}", started)
    else:
        run.finish(index, "signal", f"signal: the sandbox ended during workload {index} without a report", started)


def start_child(run: Run, submission: bytes, first: int, token: str) -> tuple[subprocess.Popen[bytes], int, str]:
    """Start one child on workloads[first:]; return the process, the report pipe and the directory."""
    limits = run.limits
    uid = UID_BASE + secrets.randbelow(1 << 16)
    tmp = tempfile.mkdtemp(prefix="schedcheck-sandbox-")
    module = os.path.join(tmp, MODULE)
    Path(module).write_bytes(submission)
    job_path = os.path.join(tmp, ".job.json")
    rlimits = dict(zip(RLIMITS, (limits.cpu_seconds, limits.memory_bytes, limits.file_bytes, limits.open_files,
                                 limits.processes, 0), strict=True))
    hide = [p for p in (str(PROJECT), *limits.hide) if not (tmp + os.sep).startswith(p.rstrip(os.sep) + os.sep)]
    Path(job_path).write_text(json.dumps({
        "driver": DRIVER_SOURCE, "rlimits": rlimits, "refuse": REFUSED, "hidden": hide, "module": module,
        "first": first,
        "white_box": limits.white_box, "workload_cpu_seconds": limits.workload_cpu_seconds,
        "workloads": [{"workload": data, "step_cap": cap} for _, data, cap in run.items[first:]]}))
    for path in (tmp, module, job_path):
        os.chmod(path, 0o755 if path == tmp else 0o644)
        if run.iso.level == "pid-namespace":
            os.chown(path, uid, uid)
    read_end, write_end = os.pipe()
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0",
           "HOME": tmp, "TMPDIR": tmp, "SCHEDCHECK_SANDBOX": token}
    argv = prefix(run.iso.level, uid, hide) + [sys.executable, "-P", "-s", "-S", "-B", "-c", BOOT_SOURCE,
                                                str(write_end), job_path]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=tmp, env=env, start_new_session=True, pass_fds=(write_end,))
    finally:
        os.close(write_end)
    run.children += 1
    return proc, read_end, tmp


class Child:
    """One child process on workloads[first:]: reads its pipes, checks its messages, records results."""

    def __init__(self, run: Run, submission: bytes, first: int, run_deadline: float) -> None:
        self.run, self.run_deadline, self.token = run, run_deadline, secrets.token_hex(16)
        self.proc, self.report, self.tmp = start_child(run, submission, first, self.token)
        self.current = first  # the workload the child is working on
        self.started = time.monotonic()
        self.deadline = self.started + run.limits.startup_seconds
        self.hello = self.loaded = self.bye = self.timed_out = False
        self.exit_info: dict[str, Any] | None = None
        self.crash: str | None = None
        self.malformed: str | None = None

    def on_message(self, msg: dict[str, Any]) -> None:
        """Advance the protocol by one message (raises protocol.Malformed); docs/sandbox.md has the order."""
        kind, run, now = msg["type"], self.run, time.monotonic()
        if kind == "exit":  # from the supervisor: the worker is gone; drain what is left, briefly
            self.exit_info, self.deadline = msg, min(self.deadline, now + 1.0)
        elif kind == "crash":
            self.crash = str(msg.get("message"))[:500]
        elif not self.hello:
            if kind != "hello":
                raise protocol.Malformed(f"the first message is {kind[:40]!r}, not 'hello'")
            self.hello = True
            self.check_hello(msg)
        elif not self.loaded:
            if kind == "load_error":
                error = msg.get("error")
                fields = [str(error.get(k))[:400] for k in ("kind", "exc_type", "message")] if isinstance(
                    error, dict) else ["load_error", "?", "no detail"]
                run.load_error = ": ".join(fields)
            elif kind != "loaded":
                raise protocol.Malformed(f"expected 'loaded' or 'load_error', got {kind[:40]!r}")
            self.loaded, self.started, self.deadline = True, now, now + run.limits.workload_seconds
        elif kind == "trace" and self.current < len(run.items):
            if msg.get("workload") != self.current:
                raise protocol.Malformed(f"a trace for workload {str(msg.get('workload'))[:20]} arrived while "
                                         f"workload {self.current} was running")
            refused = msg.get("refused")
            if type(refused) is list:
                run.refused += [r[:100] for r in refused[:20] if type(r) is str]
            judge_trace(run, self.current, msg, self.started)
            self.current, self.started, self.deadline = self.current + 1, now, now + run.limits.workload_seconds
        elif kind == "bye" and self.current == len(run.items):
            self.bye = True
        else:
            raise protocol.Malformed(f"unexpected message {kind[:40]!r}")

    def check_hello(self, msg: dict[str, Any]) -> None:
        """Note any limit the child could not set and a project tree it can still see (hello precedes the import)."""
        applied, hidden = msg.get("rlimits"), msg.get("hidden")
        unset = [name for name in RLIMITS if type(applied) is not dict or name not in applied]
        if unset:
            self.run.notes.append(f"the child could not set {', '.join(unset)}; those limits were not in force")
        if self.run.iso.hides_project and (type(hidden) is not list or str(PROJECT) not in hidden):
            self.run.notes.append(f"the project directory {PROJECT} could not be hidden from the child")

    def pump(self) -> None:
        """Read all three pipes until they close, a message is malformed, or a deadline passes."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        sel = selectors.DefaultSelector()
        for fd, name in ((self.proc.stdout.fileno(), "stdout"), (self.proc.stderr.fileno(), "stderr"),
                         (self.report, "report")):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ, name)
        buffer, received = b"", 0
        while sel.get_map() and self.malformed is None and self.run.load_error is None:
            wait = min(self.deadline, self.run_deadline) - time.monotonic()
            if wait <= 0:
                self.timed_out = True
                break
            for key, _ in sel.select(wait):
                data = os.read(key.fd, 1 << 16)
                if not data:
                    sel.unregister(key.fd)
                elif key.data != "report":
                    self.run.capture(key.data, data)
                elif (received := received + len(data)) > self.run.limits.report_bytes:
                    self.malformed = f"the reports exceeded {self.run.limits.report_bytes} bytes"
                else:
                    *lines, buffer = (buffer + data).split(b"\n")
                    try:
                        for line in filter(None, lines):
                            self.on_message(protocol.parse_line(line))
                    except protocol.Malformed as e:
                        self.malformed = str(e)
        sel.close()

    def close(self) -> None:
        self.run.survivors += kill_tree(self.run.iso, self.proc, self.token)
        os.close(self.report)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def conclude(self) -> int:
        """Record how the child ended; return the workload the next child starts from."""
        run, limits, current = self.run, self.run.limits, self.current
        if run.load_error is not None or current == len(run.items):
            return len(run.items)
        if self.malformed is not None:
            run.finish(current, "protocol", f"protocol: the child's report for workload {current} is malformed: "
                       f"{self.malformed}", self.started)
        elif not self.hello:
            tail = bytes(run.streams["stderr"][-300:]).decode(errors="replace")
            run.notes.append(f"the sandbox did not start: {tail}")
            for index in range(current, len(run.items)):
                run.finish(index, "sandbox_error", f"sandbox_error: the {run.iso.level} sandbox failed to start "
                           "(see the notes); this is a fault of the grader's machine, not of the submission",
                           self.started)
            return len(run.items)
        elif not self.loaded:
            run.load_error = (f"timeout: importing the submission ran past {limits.startup_seconds} s"
                              if self.timed_out else "the process ended while importing the submission "
                              f"(exit code {(self.exit_info or {}).get('code')}, signal "
                              f"{(self.exit_info or {}).get('signal')})")
            return len(run.items)
        elif self.timed_out:
            whole = time.monotonic() >= self.run_deadline
            limit = f"the whole run's {limits.run_seconds} s" if whole else f"{limits.workload_seconds} s"
            run.finish(current, "timeout", f"timeout: workload {current} ran past {limit} of wall time; its "
                       f"process tree was killed ({run.iso.level})", self.started)
        else:
            ended(run, current, self.exit_info, self.crash, self.started)
        return current + 1


def run_child(run: Run, submission: bytes, first: int, run_deadline: float) -> int:
    """Run one child from workload `first`; return the index the next child should start from."""
    child = Child(run, submission, first, run_deadline)
    try:
        child.pump()
    finally:
        child.close()
    return child.conclude()


def run_in_sandbox(submission_path: str | Path, workloads: Sequence[Workload | Mapping[str, Any]],
                   limits: Limits | None = None) -> SandboxResult:
    """Run every workload on the submission in sandboxed children and return what was observed.

    Invalid workloads or limits are the caller's error and raise; nothing the submission does raises.
    """
    limits = limits or Limits()
    begun = time.monotonic()
    items = [prepare(w, limits) for w in workloads]
    run = Run(detect(sys.executable, limits.isolation), limits, items)
    try:
        submission = Path(submission_path).read_bytes()
    except OSError as e:
        submission, run.load_error = b"", f"cannot read the submission {str(submission_path)!r}: {e.strerror}"
    index, run_deadline = 0, begun + limits.run_seconds
    while index < len(items) and run.load_error is None and time.monotonic() < run_deadline:
        index = run_child(run, submission, index, run_deadline)
    for rest in range(len(items)):
        if rest not in run.results:
            status, cause = (("load_error", f"load_error: {run.load_error}") if run.load_error
                             else ("not_run", f"not_run: the whole run's {limits.run_seconds} s were spent first"))
            run.finish(rest, status, cause, time.monotonic())
    return SandboxResult(
        run.iso, tuple(run.results[i] for i in range(len(items))), run.load_error,
        bytes(run.streams["stdout"]).decode(errors="replace"), bytes(run.streams["stderr"]).decode(errors="replace"),
        run.truncated["stdout"], run.truncated["stderr"], run.output_bytes, tuple(dict.fromkeys(run.refused)),
        run.children, run.survivors, round(time.monotonic() - begun, 4), tuple(dict.fromkeys(run.notes)))
