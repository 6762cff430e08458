"""Mutant no_admission_after_preemption: phase 2 is skipped in a step that preempted (as vLLM v1 does)."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def schedule(self) -> dict[str, int]:
        batch: dict[str, int] = {}
        before = self.num_preemptions
        budget = self.schedule_running(batch, self.max_num_batched_tokens)
        if self.num_preemptions == before:  # bug: the victim is not retried in the same step
            self.admit_waiting(batch, budget)
        self._batch = batch
        return dict(batch)
