"""Typed errors of the reference model (docs/rules.md, "Settled here").

Every message says what happened with the actual values, the rule involved,
and what to do next.
"""

from __future__ import annotations


class SpecError(Exception):
    """Base of every error the model raises on bad input or bad call order."""


class InvalidConfig(SpecError):
    """A Config field is out of range or of the wrong type."""


class InvalidRequest(SpecError):
    """A request passed to add() is malformed, duplicated or can never fit."""


class ProtocolError(SpecError):
    """schedule() and update() were called out of order."""


class InvalidWorkload(SpecError):
    """A workload or trace file does not follow docs/trace-format.md."""
