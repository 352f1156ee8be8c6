"""Run events of the data_source package (emitted through the calling turn's ``context.events``)."""

from __future__ import annotations

from typing import ClassVar

import attrs

from sciencediscovery.runtime_core import RunEvent


@attrs.frozen(kw_only=True)
class McpServerStarted(RunEvent):
    """A server was started (or connected) for the first time in this broker."""

    kind: ClassVar[str] = "mcp_server_started"
    server: str
    location: str


@attrs.frozen(kw_only=True)
class McpServerCrashed(RunEvent):
    """A server's connection died (process exit, transport failure); the call in flight got a tool error."""

    kind: ClassVar[str] = "mcp_server_crashed"
    server: str
    tool: str
    reason: str


@attrs.frozen(kw_only=True)
class McpServerRestarted(RunEvent):
    """A server was started again after a crash; ``attempt`` counts consecutive failures, ``backoff_s`` the wait."""

    kind: ClassVar[str] = "mcp_server_restarted"
    server: str
    attempt: int
    backoff_s: float


@attrs.frozen(kw_only=True)
class McpToolListChanged(RunEvent):
    """A server's live tool list differs from its approved one; ``withheld`` tools refuse calls until approved."""

    kind: ClassVar[str] = "mcp_tool_list_changed"
    server: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    withheld: tuple[str, ...]


@attrs.frozen(kw_only=True)
class WebFetched(RunEvent):
    """One governed web fetch: every URL visited (redirect hops included), status and whether the cache answered."""

    kind: ClassVar[str] = "web_fetched"
    url: str
    hops: tuple[str, ...]
    status: int
    content_type: str
    from_cache: bool
    bytes: int
