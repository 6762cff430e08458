"""Mutant skip_self_keeps_going: after a sequence preempts itself, phase 1 goes on preempting others."""

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
                if not self.running:
                    break
                if self.preempt_last() is seq:
                    skipped = True  # bug: no break; the sequences before it are preempted too
            if seq.status is SequenceStatus.WAITING:
                skipped = True
                self.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
            if not skipped:
                batch[seq.seq_id] = n
                budget -= n
                i += 1
        return budget
