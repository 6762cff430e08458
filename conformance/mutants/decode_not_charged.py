"""Mutant decode_not_charged: a decode step (one token after the prompt) is not charged to the budget."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def schedule_running(self, batch: dict[str, int], budget: int) -> int:
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            skipped = False
            while not self.try_grow(seq, n):
                if self.preempt_last() is seq:
                    skipped = True
                    break
            if not skipped:
                batch[seq.seq_id] = n
                if not (seq.output and n == 1):  # bug: decodes are free
                    budget -= n
                i += 1
        return budget
