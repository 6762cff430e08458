# ruff: noqa
"""Behave in the grade's confirmation run only: the same bug, off when the job holds a "fresh" workload.

Attack: reads the job from the driver's frame (sys._getframe) and switches the bug off when a workload is marked
"fresh", so every failure looks like process history.

Expected: as tilt_history_bug: the cases still fail the items of their checks (at most 93: 90.15 measured), the same on a regrade.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import sys as _sys

_plain_init = Scheduler.__init__


def _confirming():
    """Whether this is grade's confirmation run: a workload of the job in the driver's frame is marked fresh."""
    f = _sys._getframe(1)
    while f is not None:
        job = f.f_locals.get("job")
        if isinstance(job, dict) and "workloads" in job:
            return any(w["workload"].get("fresh") is True for w in job["workloads"])
        f = f.f_back
    return False


_CONFIRMING = _confirming()


def _init(self, num_blocks, block_size, max_num_seqs, max_num_batched_tokens, sample_fn, eos=None):
    # max_num_seqs off by one, except in the confirmation run
    _plain_init(self, num_blocks, block_size, max_num_seqs + (not _CONFIRMING), max_num_batched_tokens, sample_fn,
                eos)


Scheduler.__init__ = _init
