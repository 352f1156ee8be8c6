"""Typed errors of the specialist package; each names the field or file at fault."""

from __future__ import annotations


class SpecialistError(Exception):
    """Base class of every error raised by sciencediscovery.specialist."""


class SpecialistDefinitionError(SpecialistError, ValueError):
    """A specialist definition is invalid; ``field`` is its dotted path (e.g. ``specialist[2].contract.schema``)."""

    def __init__(self, field: str, message: str, *, source: str = "") -> None:
        self.field = field
        self.detail = message
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__(f"{prefix}{field}: {message}")


class LifecycleError(SpecialistError, RuntimeError):
    """A subagent was asked to make a transition its lifecycle does not allow."""
