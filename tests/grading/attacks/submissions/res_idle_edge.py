# ruff: noqa
"""Sleep just past the 0.5 s idle limit in a few public runs: 1.3 s in 9 of them, 0.6 s in 21 (with the
limits checked every 0.2 s, a 0.6 s sleep timed out only when a check fell in its last 0.1 s), aiming
the count of time-outs at the rubric's max_timeouts. Correct otherwise.

Expected: those runs time out, every time (score under 100), and the same score on a regrade.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import time as _time
import zlib as _zlib


def _fingerprint(s):
    return _zlib.crc32(repr((s.num_blocks, s.block_size, s.max_num_seqs, s.max_num_batched_tokens, s.eos,
                             [(q.seq_id, q.prompt_len, q.max_tokens) for q in s.waiting])).encode())


_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def schedule(self):
        if not self.__dict__.get('_hooked'):  # the first schedule() of each instance, before its order check
            self._hooked = True
            self._fp = _fingerprint(self)
            if self._fp % 7919 < 27:  # 9 public runs: always past the 0.5 s idle limit
                _time.sleep(1.3)
            elif (self._fp // 7919) % 10007 < 43:  # 21 public runs: a coin flip of the 0.2 s poll phase
                _time.sleep(0.6)
        return super().schedule()
