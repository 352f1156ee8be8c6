"""Typed errors of the data_source package; each names the server, field, file or URL at fault."""

from __future__ import annotations

from sciencediscovery.tools import ToolFailure


class DataSourceError(Exception):
    """Base class of every error raised by sciencediscovery.data_source outside a tool call."""


class SourceConfigError(DataSourceError, ValueError):
    """A source configuration is invalid; ``where`` names the file or settings key, ``field`` the entry."""

    def __init__(self, where: str, field: str, message: str) -> None:
        self.where = where
        self.field = field
        super().__init__(f"{where}: {field}: {message}")


class UnknownServerError(DataSourceError, KeyError):
    """No MCP server of that name is configured."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        super().__init__(f"no MCP server named {name!r}; configured: {', '.join(known) or 'none'}")

    def __str__(self) -> str:
        return str(self.args[0])


class PinStoreError(DataSourceError):
    """The approved tool-list file cannot be read or written; the message names the file."""


class McpCallError(ToolFailure):
    """An MCP call failed (server crash, protocol error, withheld tool); ``error_kind`` classifies it."""


class WebFetchError(ToolFailure):
    """A web fetch was refused or failed; ``error_kind`` classifies it (``network_policy``, ``too_large``...)."""
