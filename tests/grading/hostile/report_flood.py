# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Write endless well-formed JSON lines to every inherited pipe (the report pipe among them) at import.

Expected: the parent stops reading at its caps (messages, bytes) and blames the submission: protocol
or load_error, never the grader's memory.
"""
import os

_line = b'{"type":"crash","message":"' + b"x" * 4000 + b'"}\n'
for _fd in range(3, 64):
    try:
        if os.fstat(_fd).st_mode & 0o170000 == 0o010000:  # a pipe
            for _ in range(20000):
                os.write(_fd, _line)
    except OSError:
        pass
