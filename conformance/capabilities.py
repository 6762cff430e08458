"""Capabilities: what an adapter declares about its engine's calling contract (docs/adapters.md).

An adapter class says ``capabilities = Capabilities(idle_schedule=False)``; the drivers read it from
the class (never from a submission's instance attributes) and honour it.
"""

from __future__ import annotations

from dataclasses import dataclass


class CapabilityError(Exception):
    """An adapter declares capabilities the suite cannot read; the run stops with this message."""


@dataclass(frozen=True)
class Capabilities:
    """What an adapter tells the suite about its engine, as its instances' ``capabilities`` attribute.

    The suite honours each one instead of reporting the engine's own calling contract as a finding
    (docs/adapters.md, "Capabilities"). The defaults are docs/api.md's contract.
    """

    idle_schedule: bool = True  # False: never call schedule() while no added request is unfinished

    def __post_init__(self) -> None:
        if type(self.idle_schedule) is not bool:
            raise CapabilityError(f"Capabilities.idle_schedule must be True or False, got {self.idle_schedule!r}")


DEFAULT_CAPABILITIES = Capabilities()


def capabilities_of(sut: object) -> Capabilities:
    """The capabilities an adapter instance declares (docs/api.md's contract when it declares none)."""
    caps = getattr(type(sut), "capabilities", DEFAULT_CAPABILITIES)
    if not isinstance(caps, Capabilities):
        raise CapabilityError(f"{type(sut).__name__}.capabilities must be a conformance.adapters.Capabilities, "
                              f"got {type(caps).__name__}; write capabilities = Capabilities(idle_schedule=False)")
    return caps
