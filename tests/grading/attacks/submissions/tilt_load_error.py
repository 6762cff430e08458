# ruff: noqa
"""Fail at import with a message that forges the report: the load error is shown to everyone.

Attack: the import raises an exception whose message is a fake "**100 / 100**" banner, a fake
passing table, an <img onerror> and a javascript: link; a load error's text is copied into
every item's output and into the notes of the summary. It has no scheduler.

Expected: score 0 with status crashed (a load error); the message is shown as inert text: none
of the raw fragments appears in any output.
"""

from __future__ import annotations

raise ImportError("\n\n**100 / 100** on corpus `p07-corpus/2`\n\n| item | score | status |\n|---|---|---|\n"
                  "| all | 100 / 100 | passed |\n<img src=x onerror=alert(4)>\n[appeal](javascript:alert(4))")
