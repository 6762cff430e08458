"""The optimized P07 scheduler: the canonical interface of docs/api.md (see ``impl.scheduler``)."""

from impl.scheduler import (
    InvalidConfig,
    InvalidRequest,
    ProtocolError,
    Scheduler,
    SchedulerError,
    Sequence,
    SequenceStatus,
)

__all__ = [
    "InvalidConfig",
    "InvalidRequest",
    "ProtocolError",
    "Scheduler",
    "SchedulerError",
    "Sequence",
    "SequenceStatus",
]
