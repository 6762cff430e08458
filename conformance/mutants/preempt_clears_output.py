"""Mutant preempt_clears_output: the output is cleared on preemption."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def preempt_last(self) -> Sequence:
        victim = super().preempt_last()
        victim.output.clear()  # bug: preemption loses the cache, not the progress
        return victim
