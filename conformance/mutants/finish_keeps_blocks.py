"""Mutant finish_keeps_blocks: a finished sequence keeps its blocks."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def finish(self, seq: Sequence) -> None:
        seq.status = SequenceStatus.FINISHED
        self.running.remove(seq)  # bug: blocks_used and num_blocks are not released
        self.finished.append(seq)
