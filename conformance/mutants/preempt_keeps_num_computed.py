"""Mutant preempt_keeps_num_computed: num_computed is not reset on preemption."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def preempt_last(self) -> Sequence:
        victim = self.running.pop()
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0  # bug: num_computed is kept
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim
