"""One submission, one process: the kernel refuses every new process (conformance/sandbox/oneproc.py).

A helper process escapes what the sandbox measures per process (memory per process, CPU of children
the kernel reaped, wall time in state D), so a Python submission may start no process and no thread,
and a wire program threads only. These run with the default limits' filter on, at every level this
machine has; tests/grading/test_sandbox.py and test_isolation.py run the defences behind it with it off.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from conformance.sandbox.isolation import LEVELS, works
from conformance.sandbox.run import run_in_sandbox
from spec.model import Config
from spec.trace import Request, make_workload
from tests.grading.test_isolation import FORK_IN_SCHEDULE, THREAD_AT_IMPORT
from tests.grading.test_sandbox import (
    ARRIVALS,
    HERE,
    SELF_PREEMPTION,
    TIGHT,
    WORKLOADS,
    assert_matches_reference,
    marked,
)
from tests.grading.test_wire_submissions import FORK, program

ROOT = Path(__file__).resolve().parents[2]
AVAILABLE = [level for level in LEVELS if works(level)]
SPAWN_IN_SCHEDULE = ("import subprocess as _sp\n_plain = Scheduler.schedule\n\n\ndef _spawning(self):\n"
                     "    _sp.run(['/bin/true'])\n    return _plain(self)\n\n\nScheduler.schedule = _spawning\n")
HELPERS = [  # (name, appended to the correct scheduler, how the run ends, words of its cause)
    ("fork", FORK_IN_SCHEDULE, "exception", "PermissionError"),
    ("spawn", SPAWN_IN_SCHEDULE, "exception", "PermissionError"),
    ("thread", THREAD_AT_IMPORT, "load_error", "can't start new thread"),
    ("daemon", (HERE / "hostile" / "daemon_at_import.py").read_text(), "load_error", "PermissionError"),
]
needs_python3 = pytest.mark.skipif(not shutil.which("python3", path="/usr/bin:/bin"),
                                   reason="the wire programs here run on the system's python3 (/usr/bin/python3)")


@pytest.mark.parametrize("level", AVAILABLE)
@pytest.mark.parametrize(("name", "tail", "status", "words"), HELPERS, ids=[h[0] for h in HELPERS])
def test_a_python_submission_can_start_no_process_and_no_thread(
        level: str, name: str, tail: str, status: str, words: str, tmp_path: Path) -> None:
    """Even with RLIMIT_NPROC room for 16 (TIGHT): the filter, not the limit, refuses the helper."""
    path = tmp_path / name / "p07_scheduler.py"
    path.parent.mkdir()
    path.write_text((ROOT / "impl" / "scheduler.py").read_text() + "\n\n" + tail)
    result = run_in_sandbox(path, [SELF_PREEMPTION], dataclasses.replace(TIGHT, isolation=level))
    assert [w.status for w in result.workloads] == [status], result.causes()
    assert words in (result.load_error or "") + result.workloads[0].cause
    if status == "load_error":  # a load error reports no "loaded" message: the flag stays unset
        assert not result.one_process
    else:
        assert result.one_process, result.notes
    assert result.survivors == 0 and marked(b"sleep\x00913.5\x00", result.child_uid) == []


REACH_SUPERVISOR = """
import ctypes as _ctypes
import os as _os

_libc = _ctypes.CDLL(None, use_errno=True)
_reached = []
if _libc.ptrace(16, _os.getppid(), 0, 0) == 0:  # PTRACE_ATTACH: then make it fork, run its registers, ...
    _reached.append("ptrace")
_buf = _ctypes.create_string_buffer(8)
_iov = (_ctypes.c_void_p * 2)(_ctypes.cast(_buf, _ctypes.c_void_p), 8)
if _libc.process_vm_readv(_os.getppid(), _iov, 1, _iov, 1, 0) >= 0 or _ctypes.get_errno() not in (1, 38):
    _reached.append("process_vm_readv")
if _reached:
    raise RuntimeError("reached the supervisor: " + ", ".join(_reached))
"""


def test_a_python_submission_cannot_reach_into_its_supervisor(tmp_path: Path) -> None:
    """The supervisor forks before the filter is installed in the worker: a worker that could ptrace it (same uid,
    no Yama here) made it fork, exec a shell and start processes. Every process of the child is non-dumpable and
    under the filter, and the filter refuses ptrace and process_vm_*."""
    path = tmp_path / "reach" / "p07_scheduler.py"
    path.parent.mkdir()
    path.write_text((ROOT / "impl" / "scheduler.py").read_text() + "\n\n" + REACH_SUPERVISOR)
    result = run_in_sandbox(path, [SELF_PREEMPTION], TIGHT)
    assert result.load_error is None, result.load_error
    assert [w.status for w in result.workloads] == ["ok"], result.causes()


def test_the_correct_scheduler_runs_under_the_filter_and_says_so(tmp_path: Path) -> None:
    result = run_in_sandbox(ROOT / "impl" / "scheduler.py", WORKLOADS, TIGHT)
    assert result.one_process and not any("not refused" in n for n in result.notes), result.notes
    for workload, got in zip(WORKLOADS, result.workloads, strict=True):
        assert_matches_reference(workload, got)
    off = run_in_sandbox(ROOT / "impl" / "scheduler.py", WORKLOADS, dataclasses.replace(TIGHT, one_process=False))
    assert not off.one_process


THREAD = r'''
import os, sys, threading
ran = []
t = threading.Thread(target=lambda: ran.append(1))
t.start()
t.join()
print(f"threads ran {len(ran)}", file=sys.stderr, flush=True)
os.execv(sys.executable, [sys.executable, "scheduler.py"])
'''


@needs_python3
def test_a_wire_program_may_start_threads_but_no_process(tmp_path: Path) -> None:
    """A runtime's threads (Node's, the JVM's, Go's) are the program; a forked helper is not."""
    forked = run_in_sandbox(program(tmp_path, ["python3", "prelude.py"], FORK, "forks"), WORKLOADS, TIGHT)
    assert "forked 0" in forked.stderr, forked.stderr
    threaded = run_in_sandbox(program(tmp_path, ["python3", "prelude.py"], THREAD, "threads"), WORKLOADS, TIGHT)
    assert "threads ran 1" in threaded.stderr, threaded.stderr
    for result in (forked, threaded):
        assert result.one_process, result.notes
        for workload, got in zip(WORKLOADS, result.workloads, strict=True):
            assert_matches_reference(workload, got)
        assert result.survivors == 0


PLANTED = '''import sys
print("planted module ran in the worker", file=sys.stderr, flush=True)
raise ImportError("no msvcrt here")
'''


@needs_python3
def test_a_wire_folder_holds_no_module_the_worker_imports(tmp_path: Path) -> None:
    """The worker starts the program with subprocess, which tries `import msvcrt` to tell Windows apart; a
    folder on the worker's import path would run its msvcrt.py there, beside the job and the held-out block."""
    folder = program(tmp_path, ["python3", "scheduler.py"])
    (folder / "msvcrt.py").write_text(PLANTED)
    result = run_in_sandbox(folder, [SELF_PREEMPTION, ARRIVALS], TIGHT)
    assert "planted module ran" not in result.stderr, result.stderr
    assert [w.status for w in result.workloads] == ["ok", "ok"], result.causes()


@needs_python3
def test_a_wire_worker_s_own_cpu_is_not_the_program_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker of a wire run reads the program's replies (a snapshot after every call holds every output) and
    runs none of its code: its CPU does not count against the program's limit. Here the worker is made to look
    5 s busier at every sample: a wire run is still ok, a Python submission's run (its code in that worker)
    is cut."""
    from conformance.sandbox import procs, watch

    workers: list[int] = []
    real_host_pid, real_sample = watch.host_pid, watch.tree_sample

    def remember(*args: object) -> int | None:
        pid = real_host_pid(*args)  # type: ignore[arg-type]
        if pid is not None:
            workers.append(pid)
        return pid

    samples, loaded = [0], [False]
    real_watch_sample = watch.Child.sample

    def phased(self: watch.Child) -> bool:
        loaded[0] = self.loaded
        return real_watch_sample(self)

    def busier(pid: int, files: object = None) -> tuple[float, bool, list[tuple[int, list[bytes], int]]]:
        cpu, running, walked = real_sample(pid, files)  # type: ignore[arg-type]
        samples[0] += loaded[0]  # once the module is loaded (an import sampled twice would be cut before any
        # workload: samples come every 1/64 s), the worker looks 5 s busier at every sample: past any workload's limit
        out = []
        for p, fields, parent in walked:
            if workers and p == workers[-1]:
                fields = [*fields[:11], str(int(fields[11]) + 5 * samples[0] * procs.TICK).encode(), *fields[12:]]
                cpu += 5 * samples[0]
            out.append((p, fields, parent))
        return cpu, running, out

    monkeypatch.setattr(watch, "host_pid", remember)
    monkeypatch.setattr(watch, "tree_sample", busier)
    monkeypatch.setattr(watch.Child, "sample", phased)
    wire = run_in_sandbox(program(tmp_path, ["python3", "scheduler.py"]), [SELF_PREEMPTION], TIGHT)
    assert [w.status for w in wire.workloads] == ["ok"], wire.causes()
    # a run of 2^10 steps: samples land in it even when the parent gets little CPU (a short one may end unsampled)
    steps = make_workload(Config(2**11, 1, 1, 1), [Request(f"r{i}", 1, 1) for i in range(2**10)], name="steps")
    samples[0], loaded[0] = 0, False  # as the wire run left them, a sample before the first of this run bumped it
    module = run_in_sandbox(ROOT / "impl" / "scheduler.py", [steps], TIGHT)
    assert [w.status for w in module.workloads] == ["cpu_limit"], module.causes()
