"""Mutant capacity_off_by_one: a sequence fits only if blocks_used + need < num_blocks."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def try_grow(self, seq: Sequence, n: int) -> bool:
        need = self.blocks_for(seq.num_computed + n) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need >= self.num_blocks:  # bug: the last free block is never used
            return False
        self.blocks_used += need
        seq.num_blocks += need
        return True
