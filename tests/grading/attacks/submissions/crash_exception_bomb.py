# ruff: noqa
"""Raise exceptions built to break the report: in about 37 public runs, a __str__ that hangs or raises,
a __repr__ that raises, a 12 MB message of control characters, a 100 KB class name of HTML and markdown,
GeneratorExit, StopIteration, SystemExit, KeyboardInterrupt, a __str__ returning a non-str, a cause that
is itself. Correct everywhere else.

Expected: graded, those runs fail and nothing else does (score a little under 100, some item failed),
no grader error, the report escaped, the same score on a regrade.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import zlib as _zlib


def _fingerprint(s):
    return _zlib.crc32(repr((s.num_blocks, s.block_size, s.max_num_seqs, s.max_num_batched_tokens, s.eos,
                             [(q.seq_id, q.prompt_len, q.max_tokens) for q in s.waiting])).encode())


class _Loop(Exception):
    def __str__(self):
        while True:
            pass


class _Raises(Exception):
    def __str__(self):
        raise _Raises("again")

    def __repr__(self):
        raise ValueError("repr too")


class _Weird(str):
    def __len__(self):
        return -1

    def __str__(self):
        return self


class _NonStr(Exception):
    def __str__(self):
        return _Weird("\x1b[31mred\x1b[0m </details><script>alert(1)</script>")


_BIGNAME = type("E" + "<img src=x onerror=alert(1)>|`*_[x](javascript:alert(1))" * 2000, (Exception,), {})


def _boom(kind):
    if kind == 0:
        raise _Loop()
    if kind == 1:
        raise _Raises()
    if kind == 2:
        raise RuntimeError(("\x00\x1b]0;pwned\x07\r\n=HYPERLINK(\"http://evil\")\ud800 <!-- " * 200000))
    if kind == 3:
        raise _BIGNAME("name bomb")
    if kind == 4:
        raise GeneratorExit("pretend the lane closed")
    if kind == 5:
        raise StopIteration("stop")
    if kind == 6:
        raise SystemExit("\n".join(["#" * 300] * 1000))
    if kind == 7:
        raise KeyboardInterrupt()
    if kind == 8:
        raise _NonStr()
    if kind == 9:
        e = ValueError("cycle")
        e.__cause__ = e
        e.__context__ = e
        raise e


_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def schedule(self):
        if not self.__dict__.get('_hooked'):  # the first schedule() of each instance, before its order check
            self._hooked = True
            self._fp = _fingerprint(self)
            r = self._fp % 60
            if r == 7:
                _boom((self._fp // 60) % 10)
        return super().schedule()
