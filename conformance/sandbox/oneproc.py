"""One process: a seccomp filter that refuses every new process, so a run's limits are the submission's.

A scheduler needs no second process. Helpers it starts escape what the sandbox measures per process
(RLIMIT_AS is per process, a child reaped by the kernel leaves no CPU in any rusage, a child in state D
holds the wall clock at zero CPU), so the kernel refuses them instead: fork, vfork and a clone without
CLONE_THREAD fail with EPERM, and so do the calls that reach into another process (ptrace,
process_vm_readv/writev, pidfd_getfd: a process of the same uid could be made to fork); clone3 fails with
ENOSYS (its flags sit behind a pointer a filter cannot read; glibc then falls back to clone). ``threads``
keeps clone with CLONE_THREAD for the runtimes that need threads (a wire program's Node, Go or Java); a
Python submission gets none. The filter is installed under no_new_privs, which needs no privilege, and
holds across execve: at every isolation level, for the process and everything it execs. Standard library
only: boot.py and wireshim.py carry it into the child.
"""

from __future__ import annotations

import ctypes
import errno
import os

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
BPF_LOAD, BPF_RET = 0x20, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_RET|BPF_K
BPF_JEQ, BPF_JGE, BPF_JSET = 0x15, 0x35, 0x45  # BPF_JMP|...|BPF_K
RET_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
RET_EPERM = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO: the call fails, the process goes on
RET_ENOSYS = 0x00050000 | errno.ENOSYS
CLONE_THREAD = 0x00010000
X32_BIT = 0x40000000  # x86-64's x32 system calls: the same calls under other numbers
# machine -> (AUDIT_ARCH, fork, vfork, clone, clone3); aarch64 has no fork or vfork call (-1: none)
SECCOMP_ARCHES = {"x86_64": (0xC000003E, 57, 58, 56, 435), "aarch64": (0xC00000B7, -1, -1, 220, 435)}
# machine -> the calls that reach into another process of the same uid (ptrace, process_vm_readv and _writev,
# pidfd_getfd): with them a submission could make its supervisor, which holds no filter of its own, fork for it
REACHING = {"x86_64": (101, 310, 311, 438), "aarch64": (117, 270, 271, 438)}


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def filter_code(machine: str, threads: bool) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k). Offsets of struct seccomp_data: 0 the call's number, 4 the
    architecture, 16 the low half of the first argument (clone's flags; both machines are little-endian)."""
    arch, fork, vfork, clone, clone3 = SECCOMP_ARCHES[machine]
    refused = [n for n in (fork, vfork, *REACHING[machine]) if n >= 0]
    code = [(BPF_LOAD, 0, 0, 4), (BPF_JEQ, 1, 0, arch), (BPF_RET, 0, 0, RET_EPERM), (BPF_LOAD, 0, 0, 0)]
    if machine == "x86_64":
        code += [(BPF_JGE, 0, 1, X32_BIT), (BPF_RET, 0, 0, RET_EPERM)]
    for number in refused:
        code += [(BPF_JEQ, 0, 1, number), (BPF_RET, 0, 0, RET_EPERM)]
    code += [(BPF_JEQ, 0, 1, clone3), (BPF_RET, 0, 0, RET_ENOSYS), (BPF_JEQ, 1, 0, clone), (BPF_RET, 0, 0, RET_ALLOW)]
    if threads:  # a clone: a thread of this process, or nothing
        code += [(BPF_LOAD, 0, 0, 16), (BPF_JSET, 0, 1, CLONE_THREAD), (BPF_RET, 0, 0, RET_ALLOW)]
    return code + [(BPF_RET, 0, 0, RET_EPERM)]


def forbid_processes(threads: bool) -> str | None:
    """Install the filter on this process: None once it holds, else why it could not (the run then relies on
    RLIMIT_NPROC and the sweeps of its tree, docs/sandbox.md). Only the calling thread gets it: call it
    before any thread starts."""
    machine = os.uname().machine
    if machine not in SECCOMP_ARCHES:
        return f"no seccomp filter for the {machine or 'unknown'} machine"
    code = filter_code(machine, threads)
    table = (SockFilter * len(code))(*(SockFilter(*row) for row in code))
    program = SockFprog(len(code), table)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return f"prctl(PR_SET_NO_NEW_PRIVS) failed: {errno.errorcode.get(ctypes.get_errno(), '?')}"
        if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
            return f"the kernel refused the seccomp filter: {errno.errorcode.get(ctypes.get_errno(), '?')}"
    except (OSError, AttributeError) as e:
        return f"no prctl here: {e}"
    return None
