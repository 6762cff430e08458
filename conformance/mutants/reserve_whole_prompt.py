"""Mutant reserve_whole_prompt: admission reserves blocks for the whole sequence, not the chunk."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def admit_waiting(self, batch: dict[str, int], budget: int) -> int:
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self.try_grow(seq, seq.num_tokens - seq.num_computed):  # bug: every token, not n
                break
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            batch[seq.seq_id] = n
            budget -= n
        return budget
