"""Typed errors of governance. Each names the rule, field, request or epoch at fault."""

from __future__ import annotations


class GovernanceError(Exception):
    """Base class of every error raised by sciencediscovery.governance."""


class NetworkPolicyError(GovernanceError, ValueError):
    """A network policy setting is malformed; the message names the field and the value."""

    def __init__(self, field: str, value: str, message: str) -> None:
        self.field = field
        self.value = value
        super().__init__(f"network policy {field} {value!r}: {message}")
