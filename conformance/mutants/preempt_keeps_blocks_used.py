"""Mutant preempt_keeps_blocks_used: preemption resets the victim's num_blocks but not blocks_used."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def preempt_last(self) -> Sequence:
        victim = self.running.pop()
        victim.num_blocks = 0  # bug: blocks_used still counts them
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim
