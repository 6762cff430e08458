"""Beyond the small scope: a sequence preempted three times loses its output (a retry limit)."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def preempt_last(self) -> Sequence:
        victim = super().preempt_last()
        count = getattr(victim, "_preempted", 0) + 1
        victim._preempted = count  # type: ignore[attr-defined]
        if count >= 3:  # bug: "too many retries" restarts the sequence from its prompt
            victim.output.clear()
        return victim
