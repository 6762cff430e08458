"""Beyond the small scope: blocks counted with float division; wrong once token counts pass 2**53."""

import math

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def blocks_for(self, tokens: int) -> int:
        return math.ceil(tokens / self.block_size)  # bug: float division
