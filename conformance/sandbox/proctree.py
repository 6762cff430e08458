"""A process's children and descendants, read from /proc: the one place the sandbox walks a process tree.

The parent uses it on the child's tree (conformance.sandbox.procs) and the child's supervisor and
worker on their own (conformance.sandbox.boot, which runs it as part of its source: standard
library only).
"""

from __future__ import annotations

import os

CHUNK = 1 << 16


def read_all(fd: int) -> bytes:
    """A /proc file's whole text from its start. procfs builds it in one go and a read stops short only at
    its end, so one read does unless the text fills the buffer (a list of thousands of children)."""
    data = os.pread(fd, CHUNK, 0)
    while len(data) % CHUNK == 0 and data:
        more = os.pread(fd, CHUNK, len(data))
        if not more:
            break
        data += more
    return data


def read_proc(path: str) -> bytes:
    """The whole of a /proc file, read with plain system calls: a tree is read at every message of a child,
    and a buffered file object costs three times as much as the reading itself."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return read_all(fd)
    finally:
        os.close(fd)


class ProcFiles:
    """The /proc files of one process tree, kept open between readings of it (procfs builds a file's text
    anew at each read from its start): reading the tree at every message of a child then takes a third of
    the system calls. A file whose process is gone fails to read (ESRCH, even when its pid is another
    process's by now) and is opened again by its path at once, so every reading sees what opening it
    would. At most KEPT files are kept; past that, a file is opened for each reading."""

    KEPT = 32

    def __init__(self) -> None:
        self.fds: dict[str, int] = {}

    def read(self, path: str) -> bytes:
        fd = self.fds.pop(path, None)
        if fd is not None:
            try:
                data = read_all(fd)
            except OSError:  # gone: open the path again, below
                os.close(fd)
            else:
                self.fds[path] = fd
                return data
        if len(self.fds) >= self.KEPT:
            return read_proc(path)
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            data = read_all(fd)
        except BaseException:
            os.close(fd)
            raise
        self.fds[path] = fd
        return data

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


def proc_children(pid: int, threads: int = 0, files: ProcFiles | None = None) -> list[int]:
    """Direct children of pid, from /proc (every thread's list); [] once it is gone.

    `threads`: the process's thread count when its stat was just read; a process with one thread has one
    list, its main thread's, read without listing the threads first. `files`: keep the files open there."""
    found: list[int] = []
    read = files.read if files is not None else read_proc
    try:
        for task in (str(pid),) if threads == 1 else os.listdir(f"/proc/{pid}/task"):
            found += [int(p) for p in read(f"/proc/{pid}/task/{task}/children").split()]
    except OSError:
        pass
    return found


def stat_fields(pid: int, files: ProcFiles | None = None) -> list[bytes]:
    """The fields of /proc/PID/stat after the command name (state first); raises OSError once it is gone."""
    return (files.read if files is not None else read_proc)(f"/proc/{pid}/stat").rpartition(b")")[2].split()


def walk(pid: int, files: ProcFiles | None = None) -> list[tuple[int, list[bytes], int]]:
    """pid and every process below it: (pid, its stat fields, the process whose children list named it, 0 for
    pid itself), parents before their children; one that is gone (its stat unreadable) is left out, and so
    is what lay below it. `files`: keep the files open there, for the next walk of the same tree."""
    seen, todo = [], [(pid, 0)]
    while todo:
        p, parent = todo.pop()
        try:
            fields = stat_fields(p, files)
            threads = int(fields[17])
        except (OSError, ValueError, IndexError):
            continue
        seen.append((p, fields, parent))
        todo += [(child, p) for child in proc_children(p, threads, files)]
    return seen


def descendants(pid: int) -> list[int]:
    """Every process below pid, parents before their children."""
    seen, todo = [], [pid]
    while todo:
        kids = proc_children(todo.pop())
        seen += kids
        todo += kids
    return seen
