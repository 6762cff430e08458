"""A process's children and descendants, read from /proc: the one place the sandbox walks a process tree.

The parent uses it on the child's tree (conformance.sandbox.procs) and the child's supervisor and
worker on their own (conformance.sandbox.boot, which runs it as part of its source: standard
library only).
"""

from __future__ import annotations

import os


def read_proc(path: str) -> bytes:
    """The whole of a /proc file, read with plain system calls: a tree is read at every message of a child,
    and a buffered file object costs three times as much as the reading itself."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        parts = [os.read(fd, 1 << 16)]
        while parts[-1]:  # to the end, however many children a list holds
            parts.append(os.read(fd, 1 << 16))
    finally:
        os.close(fd)
    return b"".join(parts)


def proc_children(pid: int, threads: int = 0) -> list[int]:
    """Direct children of pid, from /proc (every thread's list); [] once it is gone.

    `threads`: the process's thread count when its stat was just read; a process with one thread has one
    list, its main thread's, read without listing the threads first."""
    found: list[int] = []
    try:
        for task in (str(pid),) if threads == 1 else os.listdir(f"/proc/{pid}/task"):
            found += [int(p) for p in read_proc(f"/proc/{pid}/task/{task}/children").split()]
    except OSError:
        pass
    return found


def stat_fields(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat after the command name (state first); raises OSError once it is gone."""
    return read_proc(f"/proc/{pid}/stat").rpartition(b")")[2].split()


def walk(pid: int) -> list[tuple[int, list[bytes], int]]:
    """pid and every process below it: (pid, its stat fields, the process whose children list named it, 0 for
    pid itself), parents before their children; one that is gone (its stat unreadable) is left out, and so
    is what lay below it."""
    seen, todo = [], [(pid, 0)]
    while todo:
        p, parent = todo.pop()
        try:
            fields = stat_fields(p)
            threads = int(fields[17])
        except (OSError, ValueError, IndexError):
            continue
        seen.append((p, fields, parent))
        todo += [(child, p) for child in proc_children(p, threads)]
    return seen


def descendants(pid: int) -> list[int]:
    """Every process below pid, parents before their children."""
    seen, todo = [], [pid]
    while todo:
        kids = proc_children(todo.pop())
        seen += kids
        todo += kids
    return seen
