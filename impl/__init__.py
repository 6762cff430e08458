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

MAY_IMPORT: tuple[str, ...] = ()  # the packages this one builds on (tests/test_layers.py)
