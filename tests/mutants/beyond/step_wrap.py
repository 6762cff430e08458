"""Beyond the small scope: a step counter kept in a byte; from step 256 on, the budget is lost for a step."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def schedule(self) -> dict[str, int]:
        self._step = (getattr(self, "_step", 0) + 1) % 256  # bug: wraps
        if self._step == 0:
            self._batch = {}
            return {}
        return super().schedule()
