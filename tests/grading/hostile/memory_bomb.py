# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""schedule() allocates without bound. Expected: memory (MemoryError under RLIMIT_AS).

It allocates zeroed bytes (calloc: pages not touched), so it reaches the address-space limit at once;
filling a gigabyte with bytearray took about the CPU limit of a workload on a slow machine, and the
verdict came out as timeout in one run and memory in the next.
"""
_hoard = []


def schedule(self):
    while True:
        _hoard.append(bytes(1 << 24))


Scheduler.schedule = schedule
