"""The parent's walk of a child's process tree (conformance.sandbox.proctree) finds what the plain walk finds.

walk() reads each process's stat first and, for a process with one thread, its one children list
without listing its threads; tree_cpu sums the CPU it reads there. Both must see every process of
the tree, including a child forked from a second thread, and read a /proc list of any length.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.sandbox.procs import TICK, strays, strays_in, tree_cpu, tree_sample
from conformance.sandbox.proctree import ProcFiles, descendants, read_proc, stat_fields, walk

TREE = """
import os, threading, time
def fork_and_sleep():
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
    time.sleep(60)
if os.fork() == 0:  # a child of the main thread, which forks a grandchild
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
    time.sleep(60)
    os._exit(0)
threading.Thread(target=fork_and_sleep, daemon=True).start()  # a child of a second thread
sum(range(3 * 10**7))  # some CPU time of its own
print("ready", flush=True)
time.sleep(60)
"""


@pytest.fixture
def tree() -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    yield proc
    for pid in descendants(proc.pid):
        os.kill(pid, 9)
    proc.kill()
    proc.wait()


def old_tree_cpu(pid: int) -> float:
    """tree_cpu as it was written first: the whole walk by thread listings, then every stat read."""
    total = 0
    for p in [pid, *descendants(pid)]:
        with open(f"/proc/{p}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        total += sum(int(x) for x in fields[11:15])
    return total / TICK


def test_walk_finds_every_process_of_the_tree(tree: subprocess.Popen[str]) -> None:
    walked = walk(tree.pid)
    found = [pid for pid, _, _ in walked]
    assert found[0] == tree.pid and walked[0][2] == 0
    for pid, fields, parent in walked[1:]:  # each named by its parent's children list, which its stat agrees with
        assert int(fields[1]) == parent and found.index(parent) < found.index(pid)
    assert sorted(found[1:]) == sorted(descendants(tree.pid))
    assert len(found) == 4  # the root, its two children (one from each thread), one grandchild
    assert int(stat_fields(tree.pid)[17]) == 2  # the root has two threads: its lists are read by listing them


def test_tree_cpu_sums_what_the_first_walk_summed(tree: subprocess.Popen[str]) -> None:
    cpu, _ = tree_cpu(tree.pid)
    assert cpu > 0
    assert abs(cpu - old_tree_cpu(tree.pid)) <= 2 / TICK  # the tree is asleep: nothing but a tick between reads


def test_strays_are_the_tree_below_a_supervisor_but_the_worker(tree: subprocess.Popen[str]) -> None:
    kids = [p for p in descendants(tree.pid) if int(stat_fields(p)[1]) == tree.pid]
    for worker in kids:  # the root plays the supervisor; each of its children the worker
        want = sorted(p for p in descendants(tree.pid) if p != worker)
        assert sorted(strays(worker)) == want
        _, _, walked = tree_sample(tree.pid)
        assert sorted(strays_in(walked, worker)) == want  # read off the walk tree_cpu made: the same processes
    grandchild = next(p for p in descendants(tree.pid) if p not in kids)
    assert strays_in(walk(tree.pid), grandchild) == strays(grandchild) == []  # nothing below its parent but it
    assert strays_in(walk(tree.pid), 1) == []  # a worker not in the tree: nothing of the tree, nor of the machine


def test_a_gone_process_has_no_tree() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    time.sleep(0.05)
    assert walk(proc.pid) == [] and tree_cpu(proc.pid) == (0.0, False)


def test_read_proc_reads_to_the_end(tmp_path: Path) -> None:
    for size in (300_000, 2 << 16, 0):  # several chunks of 64 KiB, an exact number of them, none
        data = os.urandom(size)
        (tmp_path / "f").write_bytes(data)
        assert read_proc(str(tmp_path / "f")) == data
        files = ProcFiles()
        assert files.read(str(tmp_path / "f")) == data == files.read(str(tmp_path / "f"))
        files.close()
    assert read_proc(f"/proc/{os.getpid()}/stat").startswith(str(os.getpid()).encode())


def test_kept_files_read_what_opening_them_reads(tree: subprocess.Popen[str]) -> None:
    files = ProcFiles()
    try:
        for _ in range(3):  # the first walk opens the files, the next ones read them again from the start
            assert [(p, parent) for p, _, parent in walk(tree.pid, files)] == \
                [(p, parent) for p, _, parent in walk(tree.pid)]
        assert 0 < len(files.fds) <= ProcFiles.KEPT
        cpu, _, _ = tree_sample(tree.pid, files)
        assert abs(cpu - tree_cpu(tree.pid)[0]) <= 2 / TICK
        leaf = next(p for p in descendants(tree.pid) if not descendants(p))
        os.kill(leaf, 9)  # a zombie now, until its parent reaps it: a fresh walk lists it too
        time.sleep(0.1)
        assert [p for p, _, _ in walk(tree.pid, files)] == [p for p, _, _ in walk(tree.pid)]
        gone = subprocess.Popen(["sleep", "30"])
        assert files.read(f"/proc/{gone.pid}/stat").startswith(b"%d (sleep)" % gone.pid)
        gone.kill()
        gone.wait()  # reaped: its pid names no process, and its kept file fails as opening it would
        with pytest.raises(OSError):
            files.read(f"/proc/{gone.pid}/stat")
        assert f"/proc/{gone.pid}/stat" not in files.fds
    finally:
        files.close()
    assert files.fds == {}


def test_no_more_files_are_kept_than_allowed(tmp_path: Path) -> None:
    files = ProcFiles()
    paths = []
    for i in range(ProcFiles.KEPT + 8):
        paths.append(tmp_path / f"f{i}")
        paths[-1].write_bytes(b"%d" % i)
    for _ in range(2):
        assert [files.read(str(p)) for p in paths] == [b"%d" % i for i in range(len(paths))]
    assert len(files.fds) == ProcFiles.KEPT
    paths[0].write_bytes(b"changed")
    assert files.read(str(paths[0])) == b"changed"  # read again from the start: what the file holds now
    files.close()
