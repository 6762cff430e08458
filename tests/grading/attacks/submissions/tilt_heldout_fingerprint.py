# ruff: noqa
"""Tell the public runs from the held-out ones: the public child always starts with the same workload
(x0036), so the first run of each process is fingerprinted; correct in that process, the max_num_seqs
bug (one sequence too many admitted) in every other one (the held-out runs, and confirmations).

Expected: about the bug's own score (the held-out cases fail at the bug's rate), far from 100.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
_MODE = []  # ["public"] or ["other"], decided at the first schedule() of the process


def _decide(s):
    if _MODE:
        return _MODE[0] == "public"
    fp = (s.num_blocks, s.block_size, s.max_num_seqs, s.max_num_batched_tokens, s.eos,
          tuple((q.seq_id, q.prompt_len, q.max_tokens) for q in s.waiting))
    _MODE.append("public" if fp == (3, 1, 2, 4, None, (("a1", 1, 3), ("a2", 1, 3))) else "other")
    return _MODE[0] == "public"


_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def schedule(self):
        if self._batch is not None or _decide(self):  # decided only once the order check passes
            return super().schedule()
        # the max_num_seqs bug: one sequence too many admitted (only phase 2 reads max_num_seqs, and no
        # submission code outside this call sees the raised value)
        self.max_num_seqs += 1
        try:
            return super().schedule()
        finally:
            self.max_num_seqs -= 1
