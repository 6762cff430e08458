"""Mutant phase2_continue: phase 2 skips a head that does not fit and admits a later one."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def admit_waiting(self, batch: dict[str, int], budget: int) -> int:
        for seq in list(self.waiting):
            if budget <= 0 or len(self.running) >= self.max_num_seqs:
                break
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self.try_grow(seq, n):
                continue  # bug: FCFS says break
            self.waiting.remove(seq)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            batch[seq.seq_id] = n
            budget -= n
        return budget
