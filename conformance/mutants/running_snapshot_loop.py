"""Mutant running_snapshot_loop: phase 1 iterates over a copy of running with a for loop."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def schedule_running(self, batch: dict[str, int], budget: int) -> int:
        for seq in list(self.running):  # bug: a sequence preempted earlier in the step is still visited
            if budget <= 0:
                break
            n = min(seq.num_tokens - seq.num_computed, budget)
            skipped = False
            while not self.try_grow(seq, n):
                if self.preempt_last() is seq:
                    skipped = True
                    break
            if not skipped:
                batch[seq.seq_id] = n
                budget -= n
        return budget
