"""At import, write a message out of order ('bye' before 'loaded') and garbage to every open descriptor above stderr
(one of them is the report pipe).

Expected: load_error (protocol), once: every fresh child would import it and write the same again, so the module
does not load; before, each child was a crash of one workload and the restarts ran until the budget was spent
(about 190 s of the grader's time for one entry).
"""
import contextlib
import os

_FORGED = b'\n{"type":"bye"}\n\xff\xfe not json\n'
for _fd in range(3, 256):
    with contextlib.suppress(OSError):
        os.write(_fd, _FORGED)
