# ruff: noqa
"""Flood stdout and stderr at import (about 48 MB per child) with terminal escapes, invalid UTF-8, a
spreadsheet formula, HTML and a javascript: link, and print at every update(). Correct scheduler.

Expected: 100 (printing is not graded, a truncation note says so), no load timeout, and none of the
markup in any rendered file.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import os as _os

_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def update(self):  # no docstring: the print comes first
        print('\x1b[31m' + 'x' * 200, flush=False)
        return super().update()


# HOSTILE: floods stdout/stderr with control bytes, invalid UTF-8 and formula/markup text; otherwise correct.
_CHUNK = (b"\x1b]0;pwned\x07\x1b[2J\r=HYPERLINK(\"http://evil\")\t<script>alert(1)</script>\xff\xfe\x00"
          b"[click](javascript:alert(1))\n") * 4096
for _ in range(60):
    for _fd in (1, 2):
        try:
            _os.write(_fd, _CHUNK)
        except OSError:
            pass
print("\u202e\ud800".encode("utf-8", "surrogatepass"))
