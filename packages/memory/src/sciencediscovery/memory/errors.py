"""Typed errors of the memory package; each names the field at fault."""

from __future__ import annotations

from sciencediscovery.runtime_core import RuntimeCoreError


class MemoryGraphError(RuntimeCoreError):
    """Base class of every error raised by sciencediscovery-memory."""


class InvalidMemoryInputError(MemoryGraphError, ValueError):
    """An entity, relation, observation or query is malformed; the message names the field."""
