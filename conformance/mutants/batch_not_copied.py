"""Mutant batch_not_copied: schedule() returns the very dict that update() reads."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def schedule(self) -> dict[str, int]:
        batch: dict[str, int] = {}
        budget = self.schedule_running(batch, self.max_num_batched_tokens)
        self.admit_waiting(batch, budget)
        self._batch = batch
        return batch  # bug: no copy
