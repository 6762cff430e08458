"""Mutant blocks_by_num_tokens: blocks are sized by num_tokens, not num_computed + n."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def try_grow(self, seq: Sequence, n: int) -> bool:
        need = self.blocks_for(seq.num_tokens) - seq.num_blocks  # bug: the whole sequence, not the chunk
        if need <= 0:
            return True
        if self.blocks_used + need > self.num_blocks:
            return False
        self.blocks_used += need
        seq.num_blocks += need
        return True
