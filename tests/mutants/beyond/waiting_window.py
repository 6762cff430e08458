"""Beyond the small scope: the waiting queue is a ring of 32 slots; a 33rd waiting sequence drops the oldest."""

from collections import deque

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.waiting = deque(maxlen=32)  # bug: a bounded queue silently drops
