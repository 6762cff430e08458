# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Fill /dev/shm and /tmp with 300 MB each (in 1 MB files, under RLIMIT_FSIZE), then behave.

Expected: ok; the writes stop at the private tmpfs's size (namespace levels) and vanish with the child.
"""
_chunk = b"\0" * (1 << 20)
for _d in ("/dev/shm", "/tmp"):
    for _i in range(300):
        try:
            with open(f"{_d}/schedcheck-hostile-fill-{_i}", "wb") as _f:
                _f.write(_chunk)
        except OSError:
            break
