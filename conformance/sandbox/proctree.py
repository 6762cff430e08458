"""A process's children and descendants, read from /proc: the one place the sandbox walks a process tree.

The parent uses it on the child's tree (conformance.sandbox.procs) and the child's supervisor and
worker on their own (conformance.sandbox.boot, which runs it as part of its source: standard
library only).
"""

from __future__ import annotations

import os


def proc_children(pid: int) -> list[int]:
    """Direct children of pid, from /proc (every thread's list); [] once it is gone."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
    except OSError:
        pass
    return found


def descendants(pid: int) -> list[int]:
    """Every process below pid, parents before their children."""
    seen, todo = [], [pid]
    while todo:
        kids = proc_children(todo.pop())
        seen += kids
        todo += kids
    return seen
