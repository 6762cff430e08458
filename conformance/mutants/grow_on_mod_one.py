"""Mutant grow_on_mod_one: a held sequence gains a block only when len % block_size == 1."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def try_grow(self, seq: Sequence, n: int) -> bool:
        tokens = seq.num_computed + n
        # bug: a held sequence grows by one block at most, and only right after a boundary
        need = self.blocks_for(tokens) if seq.num_blocks == 0 else int(tokens % self.block_size == 1)
        if need <= 0:
            return True
        if self.blocks_used + need > self.num_blocks:
            return False
        self.blocks_used += need
        seq.num_blocks += need
        return True
