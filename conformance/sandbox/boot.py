"""The sandbox child's process side: limits, the supervisor, loading the submission, the message stream.

conformance.sandbox.run passes this file's source to ``python -c`` in a fresh directory holding a copy of
the submission; the driver (conformance/sandbox/child.py) arrives as source text in the job file,
because the project tree is hidden from the child. The process forks once: the first process is a
supervisor that never runs submission code (it reaps orphans and reports how the worker ended); the
worker applies the rlimits, installs the import refuser, imports the submission, drives every
workload and writes one JSON line per message to the report fd. Messages: docs/sandbox.md.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import json
import os
import random
import resource
import signal
import sys
import types
from typing import TYPE_CHECKING, Any

from conformance.sandbox.oneproc import forbid_processes
from conformance.sandbox.proctree import descendants, proc_children

if TYPE_CHECKING:
    from conformance.sandbox import child as driver
else:
    driver = types.ModuleType("schedcheck_driver")

PROTOCOL = 1

def apply_limits(limits: dict[str, int]) -> dict[str, int]:
    """Set the rlimits the parent asked for; return the ones that took effect."""
    applied = {}
    for name, value in limits.items():
        which = getattr(resource, name)
        try:
            resource.setrlimit(which, (value, value + 1 if name == "RLIMIT_CPU" else value))
            applied[name] = value
        except (ValueError, OSError):
            pass
    return applied


def write_line(fd: int, message: dict[str, object], fresh: bool = False) -> None:
    """Write one JSON line; fresh starts a new line in case the worker died in the middle of one."""
    write_text(fd, driver.encode(message), fresh)


def write_text(fd: int, text: str, fresh: bool = False) -> None:
    data = b"\n" * fresh + text.encode() + b"\n"
    while data:
        data = data[os.write(fd, data):]


def kill_descendants(me: int) -> None:
    """Kill every process below this one; as a subreaper, orphans of the tree are our children."""
    for _ in range(100):
        kids = proc_children(me)
        if not kids:
            return
        for pid in kids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


def sweep_strays(keep: list[int]) -> None:
    """Kill what the last workload left running (every process but this worker, its supervisor and a wire
    program that serves the next workload, with its own tree) and wait until it is reaped, so the next
    workload starts with the same process count every run (RLIMIT_NPROC)."""
    me, supervisor = os.getpid(), os.getppid()
    spared = {me, *keep, *(d for pid in keep for d in descendants(pid))}
    for _ in range(200):
        strays = [p for p in descendants(supervisor) if p not in spared]  # its own descendants too
        if not strays:
            return
        for pid in strays:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        os.sched_yield()


def supervise(worker: int, fd: int, alone: bool) -> None:
    """Wait for the worker, reap every orphan, then report how the worker ended. `alone`: under the one-process
    filter too, so that even a worker that reached into this process could not make it start one."""
    if alone:
        forbid_processes(threads=False)
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == worker:
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    kill_descendants(os.getpid())
    code = os.waitstatus_to_exitcode(status)
    write_line(fd, {"type": "exit", "code": code if code >= 0 else None, "signal": -code if code < 0 else None,
                    "cpu_ms": int(1000 * (usage.ru_utime + usage.ru_stime))}, fresh=True)
    os._exit(0)


def syntax_fields(e: SyntaxError, workdir: str) -> dict[str, object]:
    """File (relative to the submission), line, text and column of a SyntaxError, each bounded."""
    name = e.filename if type(e.filename) is str else ""
    rel = os.path.relpath(name, workdir) if name.startswith(workdir + os.sep) else os.path.basename(name)
    text = e.text if type(e.text) is str else ""
    return {"file": rel[:200] or None, "line": e.lineno if type(e.lineno) is int else None,
            "text": text.rstrip("\r\n")[:200] if text else None,
            "column": e.offset if type(e.offset) is int else None}


def load(path: str, refuser: driver.Refuser) -> tuple[Any, dict[str, object] | None]:
    spec = importlib.util.spec_from_file_location("p07_scheduler", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["p07_scheduler"] = module
    try:
        spec.loader.exec_module(module)
        missing = [name for name in ("Scheduler", "Sequence") if not hasattr(module, name)]
    except BaseException as e:  # noqa: BLE001
        name, message = driver.describe(e)
        if isinstance(e, SyntaxError) and type(e).__module__ == "builtins":
            return None, {"kind": "syntax", "exc_type": name, "message": message,
                          **syntax_fields(e, os.path.dirname(path))}
        kind = "refused_import" if isinstance(e, driver.RefusedImport) or refuser.hits else "exception"
        return None, {"kind": kind, "exc_type": name, "message": message}
    if missing:
        return None, {"kind": "missing_api", "exc_type": "AttributeError",
                      "message": f"the submission defines no {' or '.join(missing)}; see docs/api.md"}
    return module, None


def load_wire(job: dict[str, Any]) -> tuple[Any, dict[str, object] | None]:
    """A wire program as a module (conformance/sandbox/wireshim.py); one that cannot start or greet: a load error."""
    try:
        return driver.load_wire(job["wire"], os.path.dirname(job["module"]), job["white_box"],
                                job["one_process"]), None
    except BaseException as e:  # noqa: BLE001
        return None, {"kind": "wire", "exc_type": "WireProtocolError", "message": driver.describe(e)[1]}


class Channel:
    """The probe channel: after the submission's first schedule() of a workload returned, the driver asks the
    parent (a "probe" message) and reads the one-byte answer here; nothing is in the pipe before that."""

    def __init__(self, fd: int, report: int) -> None:
        self.fd, self.report = fd, report
        self.last = (-1, 0)

    def flag(self, index: int) -> int:
        """Which probes workload `index` is (0: none, else the sum of their bits, driver.PROBES): asked once, after its
        first schedule(); later steps reuse the answer."""
        if self.last[0] == index:
            return self.last[1]
        try:
            write_line(self.report, {"type": "probe", "workload": index})
            answer = os.read(self.fd, 1)
        except OSError:
            answer = b""
        if len(answer) != 1 or answer[0] > driver.PROBE_MAX:
            raise driver.SubmissionProtocolError("the grader's probe channel was read or closed by the "
                                                 "submission; a submission must not touch inherited fds")
        self.last = (index, answer[0])
        return self.last[1]


def capabilities() -> int | None:
    """The effective capability set of this process, from /proc/self/status (before the submission runs)."""
    try:
        with open("/proc/self/status") as f:
            line = next((x for x in f if x.startswith("CapEff:")), "")
        return int(line.split()[1], 16) if line else None
    except (OSError, ValueError, IndexError):
        return None


def visible(path: str) -> bool:
    try:
        return bool(os.listdir(path))
    except OSError:
        return False


def work(job: dict[str, Any], fd: int, channel: Channel) -> None:
    applied = apply_limits(job["rlimits"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    refuser = driver.Refuser(job["refuse"])
    sys.meta_path.insert(0, refuser)
    if "wire" not in job:  # a wire folder's files are never importable here: this process runs none of its code
        sys.path.append(os.path.dirname(job["module"]))
    os.chdir(os.path.dirname(job["module"]))
    write_line(fd, {"type": "hello", "protocol": PROTOCOL, "pid": os.getpid(), "uid": os.getuid(),
                    "gid": os.getgid(), "cap_eff": capabilities(), "rlimits": applied,
                    "hidden": [p for p in job["hidden"] if not visible(p)]})
    random.seed(0)  # a submission that draws from `random` draws the same numbers every run
    if "wire" in job:  # the program is confined as it starts (wireshim.py); this process must still start it
        module, error = load_wire(job)
        alone = "off" if not job["one_process"] else module.confined() if module is not None else None
    else:
        alone = forbid_processes(threads=False) if job["one_process"] else "off"
        module, error = load(job["module"], refuser)
    if error is not None:
        write_line(fd, {"type": "load_error", "error": error})
        return
    spent = resource.getrusage(resource.RUSAGE_SELF)  # the whole submission when it is this one process
    write_line(fd, {"type": "loaded", "refused": refuser.hits[:20], "one_process": alone,
                    **({} if "wire" in job else {"cpu_us": int((spent.ru_utime + spent.ru_stime) * 1e6)})})
    for index, item in enumerate(job["workloads"]):
        if item["workload"].get("fresh") is True and "wire" not in job:  # a copy loaded anew, as a new process would
            random.seed(0)
            again, error = load(job["module"], refuser)
            module = again if error is None else module  # one that fails to load again: the rerun is not fresh
        used = resource.getrusage(resource.RUSAGE_SELF)
        soft = int(used.ru_utime + used.ru_stime) + 1 + item["cpu_seconds"]
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        resource.setrlimit(resource.RLIMIT_CPU, (soft if hard < 0 else min(soft, hard), hard))
        trace = driver.drive(module, item["workload"], item["step_cap"], job["white_box"],
                             lambda i=index: channel.flag(i), "wire" not in job)  # type: ignore[misc]
        write_text(fd, driver.trace_line(index, trace, refuser.hits[:20]))
        if "wire" in job:
            module.release()  # the workload's instances, closed before the next one starts
        sweep_strays(module.keep() if "wire" in job else [])
    write_line(fd, {"type": "bye"})


def main(argv: list[str]) -> None:
    """argv: report fd, job fd, probe channel fd; the job is read and its fd closed before the submission runs."""
    fd, job_fd = int(argv[1]), int(argv[2])
    channel = Channel(int(argv[3]), fd)
    with os.fdopen(job_fd, "rb") as f:
        job = json.loads(f.read())
    exec(compile(job["driver"], "sandbox_child.py", "exec"), driver.__dict__)  # trusted: sent by the parent
    gc.freeze()  # the job (thousands of runs) lives to the end: the collector walks only what the runs make
    try:  # PR_SET_CHILD_SUBREAPER: orphans of a setsid'd grandchild come back to the supervisor
        import ctypes
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
        # PR_SET_DUMPABLE 0, kept across the fork: the submission (or a wire program) runs under the same uid and
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # could else ptrace both, read their memory, open their fds
    except (OSError, AttributeError):
        pass
    worker = os.fork()
    if worker:
        os.close(channel.fd)  # the supervisor never reads the probe channel
        supervise(worker, fd, job["one_process"])
    try:
        work(job, fd, channel)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except BaseException as e:  # noqa: BLE001 - the worker must not fall through into the supervisor's code
        with contextlib.suppress(BaseException):
            write_line(fd, {"type": "crash", "message": "{}: {}".format(*driver.describe(e))})
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
