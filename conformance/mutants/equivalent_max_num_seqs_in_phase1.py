"""Equivalent mutant: phase 1 also stops at max_num_seqs scheduled sequences.

Equivalent because len(running) <= max_num_seqs always holds (admission checks it and
nothing else grows running), so the extra limit never cuts phase 1 short.
"""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def schedule_running(self, batch: dict[str, int], budget: int) -> int:
        i = 0
        while i < len(self.running) and budget > 0 and len(batch) < self.max_num_seqs:  # the extra limit
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            skipped = False
            while not self.try_grow(seq, n):
                if self.preempt_last() is seq:
                    skipped = True
                    break
            if not skipped:
                batch[seq.seq_id] = n
                budget -= n
                i += 1
        return budget
