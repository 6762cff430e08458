# ruff: noqa
"""A real bug (max_num_seqs off by one, always on) whose findings are laundered as process history.

Attack: after 8 Schedulers of one copy of the module, every batch returned gets a token more (a black-box
difference only): the smallest failing cases, rerun by the confirmation on a freshly loaded copy, pass there, so
each check's failures are put down to history ([H.history]). Every case also breaks hygiene (the dicts returned
are changed afterwards), and a failure moved to history once went lost where hygiene already had a finding: a
preempt_to_tail bug laundered so scored 85 against its own 65.61.

Expected: no more than the bug earns alone (at most 93); every failing case counts in the items that name its
check, the same on a regrade.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
_Base = Scheduler
_made = [0]  # Schedulers made by this copy of the module: a freshly loaded copy starts again at 0


class Scheduler(_Base):
    def __init__(self, num_blocks, block_size, max_num_seqs, max_num_batched_tokens, sample_fn, eos=None):
        super().__init__(num_blocks, block_size, max_num_seqs + 1, max_num_batched_tokens, sample_fn, eos)
        _made[0] += 1
        self._sabotage = _made[0] > 8
        self._given = []

    def schedule(self):
        batch = super().schedule()
        if self._sabotage and batch:
            batch = dict(batch)
            batch[next(iter(batch))] += 1
        self._given.append(batch)
        return batch

    def update(self):
        done = super().update()
        for batch in self._given:  # H.retained on every case: hygiene already has a finding
            batch["\x00"] = 0
        return done
