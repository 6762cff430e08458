"""Mutant preempt_to_tail: the victim is pushed to the tail of waiting."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def preempt_last(self) -> Sequence:
        victim = self.running.pop()
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.append(victim)  # bug: the tail, not the head
        self.num_preemptions += 1
        return victim
