"""Mutant no_chunked_prefill: a waiting head whose remaining prompt exceeds the budget is not admitted."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def admit_waiting(self, batch: dict[str, int], budget: int) -> int:
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            n = seq.num_tokens - seq.num_computed
            if n > budget:  # bug: no chunk; the head waits for a step with room for all of it
                break
            if not self.try_grow(seq, n):
                break
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            batch[seq.seq_id] = n
            budget -= n
        return budget
