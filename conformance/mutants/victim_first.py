"""Mutant victim_first: the victim is running[0], the oldest, instead of running[-1]."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def preempt_last(self) -> Sequence:
        victim = self.running.pop(0)  # bug: the oldest
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim
