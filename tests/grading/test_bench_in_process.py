"""The benchmark's in-process baseline checks each submission in a process of its own under a memory bound, so one
that makes the checks hold gigabytes is reported, not the end of the benchmark (a pool process that checked half
a class in turn grew to 12.8 GB and the kernel killed it: BrokenProcessPool, no figure at all)."""

from __future__ import annotations

import multiprocessing
import resource

import bench.throughput as throughput


def _greedy(path: str) -> float:
    return float(len(bytearray(throughput.IN_PROCESS_MEMORY)))  # more than the whole bound


def _limit(path: str) -> float:
    return float(resource.getrlimit(resource.RLIMIT_AS)[0])


def _in_fork(fake: object) -> float | None:
    throughput.in_process = fake  # type: ignore[assignment]  # only in this forked process
    return throughput.bounded_in_process("unused.py")


def test_a_check_that_needs_more_than_the_bound_is_none_and_the_bound_is_set_in_its_own_process():
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1, maxtasksperchild=1) as pool:
        assert pool.apply(_in_fork, (_greedy,)) is None
        assert pool.apply(_in_fork, (_limit,)) == throughput.IN_PROCESS_MEMORY
    assert resource.getrlimit(resource.RLIMIT_AS)[0] != throughput.IN_PROCESS_MEMORY  # this process: untouched
