"""Mutant budget_not_shared: phase 2 starts with a fresh budget."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def schedule(self) -> dict[str, int]:
        batch: dict[str, int] = {}
        self.schedule_running(batch, self.max_num_batched_tokens)
        self.admit_waiting(batch, self.max_num_batched_tokens)  # bug: one budget per phase
        self._batch = batch
        return dict(batch)
