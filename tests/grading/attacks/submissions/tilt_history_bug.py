# ruff: noqa
"""Turn on a real bug (max_num_seqs off by one) only after the module has made 12 Schedulers.

Attack: a module-level counter, an ordinary student fault. The grade's confirmation reruns failing cases on a
freshly loaded copy, where the bug is off, so the failures are put down to process history ([H.history]); that
moved them out of every item but the one that names hygiene (98.5 against 89 for the same bug always on).

Expected: only the blame moves: each case still fails the items that named its check, so the score is that of
the bug's own failures (at most 93: 91.54 measured), the same on a regrade.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
_made = [0]
_plain_init = Scheduler.__init__


def _init(self, num_blocks, block_size, max_num_seqs, max_num_batched_tokens, sample_fn, eos=None):
    _made[0] += 1  # module state: after 12 Schedulers, admit one sequence too many (max_num_seqs off by one)
    _plain_init(self, num_blocks, block_size, max_num_seqs + (_made[0] > 12), max_num_batched_tokens, sample_fn, eos)


Scheduler.__init__ = _init
