"""Starting one sandbox child: its job, its descriptors, its command line, its uid and folder.

The child gets everything through inherited file descriptors (the job as a memfd, the probe channel
as a pipe the parent answers on, the report pipe), so nothing of the grader has to be visible in its filesystem: at the
namespace levels its root holds the runtime and a read-only /sandbox with the one submission.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import conformance.beside
import spec.loop
from conformance.assemble import one_module
from conformance.sandbox.isolation import UID_BASE, plan
from conformance.sandbox.program import WireProgram
from conformance.sandbox.record import Run

PROJECT = Path(__file__).resolve().parents[2]
REFUSED = ["spec", "impl", "conformance", "schedcheck", "tests"]
BOOT_SOURCE = one_module([Path(__file__).with_name(part).read_text() for part in ("proctree.py", "oneproc.py",
                                                                                     "boot.py")],
                         "The sandbox child's supervisor and worker (boot.py), with the tree walk of proctree.py and "
                         "the one-process filter of oneproc.py.",
                         future=True)
DRIVER_PARTS = ("readers.py", "keep.py", "oneproc.py", "wireshim.py", "child.py")
DRIVER_SOURCE = one_module([Path(__file__).with_name(part).read_text() for part in DRIVER_PARTS]
                           + [Path(conformance.beside.__file__).read_text(), Path(spec.loop.__file__).read_text()],
                           "The sandbox child's driver: readers.py, keep.py, oneproc.py, wireshim.py, child.py, the "
                           "second instance of a two-instance probe (conformance/beside.py) and the run protocol "
                           "(spec/loop.py).",
                           future=True)
MODULE = "p07_scheduler.py"
FD_DIGITS = 10  # an fd number is below 2**31: the child's argv has one length however many files the grader holds
RLIMITS = ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_CORE")
_base: list[str] = []


def base_dir() -> str:
    """This process's folder for run folders: 0711, so a run's own uid can reach its folder but list nothing.
    Made before a class's worker processes fork, it is theirs too, and the parent removes it at its exit (a
    pool's worker leaves by os._exit, which runs no atexit hook: each one's own folder stayed behind)."""
    if not _base or not os.path.isdir(_base[0]):
        _base[:] = [tempfile.mkdtemp(prefix="schedcheck-sandbox-")]
        os.chmod(_base[0], 0o711)
        atexit.register(_remove_base, _base[0])
    return _base[0]


def _remove_base(path: str) -> None:
    """At exit: the folder is empty by then (each run folder is removed with its child), so rmdir suffices."""
    with contextlib.suppress(OSError):
        os.rmdir(path)


def job_fd(job: dict[str, Any], workloads: list[str] | None = None) -> int:
    """The job as an anonymous in-memory file: it never appears in any filesystem the child can see.

    `workloads`: the job's "workloads" list, each entry already written as JSON (job_entry)."""
    fd = os.memfd_create("schedcheck-job", 0)
    text = json.dumps(job)
    if workloads is not None:
        text = f'{text[:-1]}, "workloads": [{", ".join(workloads)}]}}'
    data = text.encode()
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


_entries: dict[int, tuple[dict[str, Any], tuple[int, int], str]] = {}  # id(a workload's JSON) -> (it, (step cap,
#                                                                        CPU seconds), the entry)
ENTRIES_KEPT = 1 << 14


def job_entry(data: dict[str, Any], cap: int, cpu: int) -> str:
    """One workload's entry of a job, as JSON: the workload, its step cap and its CPU seconds (Limits.cpu_for). A
    class's workloads are the same JSON objects for every submission (conformance.sandbox.run.prepared), never
    changed once made, so each is written once."""
    kept = _entries.get(id(data))
    if kept is not None and kept[0] is data and kept[1] == (cap, cpu):
        return kept[2]
    if len(_entries) >= ENTRIES_KEPT:
        _entries.clear()
    text = json.dumps({"workload": data, "step_cap": cap, "cpu_seconds": cpu})
    _entries[id(data)] = (data, (cap, cpu), text)  # the object is held: its id is not reused while it is kept
    return text


def answer_pipe() -> tuple[int, int]:
    """The probe channel: the child reads the answer to its probe question here, the parent writes it.

    Empty until the child asks (after the submission's first schedule() of a workload returned), so
    there is nothing in it to read, peek at or tee before that moment.
    """
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # one byte per workload: never full, and the parent never waits
    return read_end, write_end


_started = [0]


UID_CHILDREN = 1 << 14  # children of one grading process before its uids come round again
UID_PROCESSES = 1 << 16  # grading processes alive at once whose uids never meet (their pids differ below this)


def fresh_uid() -> int:
    """A uid no other child of this run has had: this process's pid (unique among live graders) and a count of its
    children, below 2^31 (tools that read a uid as a signed int stay right).

    Distinct uids keep RLIMIT_NPROC counts, survivor sweeps and files left in a shared /tmp apart: a child
    never finds a file an earlier child left under its uid, whatever the class's size (16,384 children of one
    grading process: a class of 3,000 submissions at five children each).
    """
    _started[0] += 1
    return UID_BASE + (os.getpid() % UID_PROCESSES) * UID_CHILDREN + _started[0] % UID_CHILDREN


ADDR_NO_RANDOMIZE = 0x0040000  # personality(2): exec without address-space randomization
_libc: list[Any] = []


@contextlib.contextmanager
def same_addresses() -> Iterator[None]:
    """Around starting the child: turn address-space randomization off for it and all it starts.

    An object's id, and so the order in which a set or a dict keyed by objects yields them, then comes
    out the same every run: a submission that iterates a set of its Sequence objects gets the same
    trace, and the same grade, each time it is graded (with randomization on, a set of a few hundred
    of them came out in a different order in every run). The flag is a personality of this thread,
    which a child inherits and its exec reads; it is set here and put back after Popen, so that Popen
    can use vfork (a preexec_fn forces a fork, which copies the page tables of a grader holding a
    class's caches, twice per submission)."""
    current = _libc[0].personality(0xFFFFFFFF) if _libc else -1
    if current != -1:
        _libc[0].personality(current | ADDR_NO_RANDOMIZE)
    try:
        yield
    finally:
        if current != -1:
            _libc[0].personality(current)


def write_program(run_dir: str, program: WireProgram) -> None:
    """The wire program's files under the run's folder, readable by the run's uid (executables 0755)."""
    for rel, data, executable in program.files:
        path = os.path.join(run_dir, rel)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        Path(path).write_bytes(data)
        os.chmod(path, 0o755 if executable else 0o644)


def start(run: Run, base: str, uid: int | None, token: str, submission: bytes | WireProgram, first: int
          ) -> tuple[subprocess.Popen[bytes], int, int]:
    """Start a child on workloads[first:] in folder `base`: its process, the read end of its report pipe and
    the write end of its probe channel."""
    limits, level = run.limits, run.iso.level
    run_dir, root_dir = os.path.join(base, "run"), os.path.join(base, "root")
    os.mkdir(run_dir, 0o700 if level == "process-group" else 0o755)
    os.mkdir(root_dir, 0o755)
    os.chmod(base, 0o711)  # the run's uid may pass through to its folder, never list it
    if isinstance(submission, WireProgram):
        write_program(run_dir, submission)
    else:
        module = os.path.join(run_dir, MODULE)
        Path(module).write_bytes(submission)
        os.chmod(module, 0o644)
    if level == "process-group" and uid is not None:
        os.chown(run_dir, uid, uid)
    how = plan(level, uid, run_dir, root_dir, str(PROJECT), list(limits.hide), limits.tmp_bytes)
    if how is None:
        raise RuntimeError(f"isolation level {level} cannot start an interpreter here")
    rlimits = dict(zip(RLIMITS, (limits.cpu_seconds, limits.memory_bytes, limits.file_bytes, limits.open_files,
                                 limits.processes, 0), strict=True))
    job = {"driver": DRIVER_SOURCE, "rlimits": rlimits, "refuse": REFUSED, "hidden": [str(PROJECT)],
           "module": os.path.join(how.workdir, MODULE), "white_box": limits.white_box,
           "one_process": limits.one_process}
    if isinstance(submission, WireProgram):
        job["wire"] = list(submission.argv)
    probe_read, probe_write = answer_pipe()
    fds = [job_fd(job, [job_entry(data, cap, limits.cpu_for(data)) for _, data, cap, _ in run.items[first:]]),
           probe_read]
    read_end, write_end = os.pipe()
    fds.insert(0, write_end)
    home = how.workdir if level == "process-group" else "/tmp"
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0",
           "HOME": home, "TMPDIR": home, "SCHEDCHECK_SANDBOX": token}
    # each fd number written to the same width: the child's first allocations must not depend on how many files the
    # grader has open (a worker's fds run to two digits), or a submission that keys state by id() is graded otherwise
    numbers = [f"{fd:0{FD_DIGITS}d}" for fd in fds]
    argv = how.argv + [how.python, "-E", "-P", "-s", "-S", "-B", "-c", BOOT_SOURCE, *numbers]
    try:
        if not _libc:
            with contextlib.suppress(OSError, AttributeError):
                _libc.append(ctypes.CDLL(None, use_errno=True))
        with same_addresses():
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    cwd=run_dir if level == "process-group" else "/", env=env,
                                    start_new_session=True, pass_fds=tuple(fds))
    except BaseException:
        os.close(probe_write)
        raise
    finally:
        for fd in fds:
            os.close(fd)
    return proc, read_end, probe_write
