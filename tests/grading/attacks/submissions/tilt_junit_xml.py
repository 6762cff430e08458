# ruff: noqa
"""Exception messages that break out of JUnit XML and carry control characters and ANSI escapes.

Attack: every update() raises a message holding `]]>`, a closing </failure></testcase> and a fake
passing <testcase>, XML-illegal control characters (\\x01, \\x08, \\x0b, \\x0c), a terminal escape
that clears the screen and paints a fake "PASSED 100/100", a carriage return and a backspace run
that overwrite what an instructor's terminal shows. It has no scheduler of its own.

Expected: score 0 with status crashed; junit.xml is well-formed XML with exactly one testcase per
rubric item; no control character (ESC, \\x01, \\x08, \\x0b, \\x0c) appears in any output.
"""

from __future__ import annotations

MESSAGE = ("]]></failure></testcase><testcase classname=\"x\" name=\"fake_all_passed\"/><testcase name=\"y\">"
           "<![CDATA[ \x01\x08\x0b\x0c \x1b[2J\x1b[H\x1b[32mPASSED 100/100\x1b[0m\r\x08\x08\x08 ok")


class Sequence:
    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id, self.prompt_len, self.max_tokens, self.output = seq_id, prompt_len, max_tokens, []


class Scheduler:
    def __init__(self, *args, **kwargs):
        self.waiting = []

    def add(self, seq):
        self.waiting.append(seq)

    def schedule(self):
        return {s.seq_id: s.prompt_len for s in self.waiting}

    def update(self):
        raise RuntimeError(MESSAGE)
