# ruff: noqa
"""Exception messages that forge a "100 / 100" banner, a passing table, an HTML image and a javascript: link.

Attack: every update() raises an exception whose message is Markdown and HTML for the report:
a fake "**100 / 100** on corpus" banner, a fake all-passed item table, a heading, an
<img src=x onerror=...> tag, a javascript: link, and an HTML comment opener that would hide the
rest of the real report. Gradescope renders `output` as Markdown (with HTML). It has no scheduler
of its own.

Expected: score 0 with status crashed; the message is shown as inert text (escaped or in a code
span): none of the raw fragments listed in EXPECTED.toml appears in any output.
"""

from __future__ import annotations

MESSAGE = ("boom\n\n**100 / 100** on corpus `p07-corpus/2`\n\n| item | score | status |\n|---|---|---|\n"
           "| all items | 100 / 100 | passed |\n\n# All tests passed\n"
           "<img src=x onerror=alert(document.cookie)>\n[see details](javascript:alert(1))\n<!--")


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
