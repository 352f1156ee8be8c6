"""The MCP broker: every configured server's connection, its approved tool list, and what is withheld.

The broker runs its own event loop in a daemon thread, so server sessions outlive any one
run's loop (a service runs many runs; tests call ``asyncio.run`` many times) and are
stopped in one place by :meth:`McpBroker.close`. Calls from a run's loop are awaited
through ``asyncio.wrap_future``; cancelling the caller cancels the request on the broker loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

import mcp_types

from .config import ServerConfig, SourcesConfig
from .connection import McpConnection, ServerCrashed
from .errors import McpCallError, UnknownServerError
from .events import McpServerCrashed, McpServerRestarted, McpServerStarted, McpToolListChanged
from .fingerprint import RemoteTool, ToolListChange, diff
from .pins import ToolPinStore

T = TypeVar("T")
Notice = Callable[[str, str], Any]
"""A run event waiting for a run: called with (run_id, context_id)."""


class McpBroker:
    """Lazily started MCP servers with pinned tool lists. Close it with the run or service that owns it."""

    def __init__(
        self,
        sources: SourcesConfig,
        pins: ToolPinStore | None = None,
        *,
        secrets: Mapping[str, str] | None = None,
    ) -> None:
        self.sources = sources
        self.pins = pins if pins is not None else ToolPinStore()
        secrets = os.environ if secrets is None else secrets
        self._connections = {
            name: McpConnection(config, secrets, self._list_changed_callback(name))
            for name, config in sources.servers.items()
        }
        self._withheld: dict[str, ToolListChange] = {}
        self._list_locks = {name: asyncio.Lock() for name in sources.servers}
        self._pending: dict[str, list[Notice]] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-broker", daemon=True)
        self._thread.start()
        self._closed = False

    # -- configuration ---------------------------------------------------------
    @property
    def servers(self) -> Mapping[str, ServerConfig]:
        return self.sources.servers

    def server(self, name: str) -> ServerConfig:
        try:
            return self.sources.servers[name]
        except KeyError:
            raise UnknownServerError(name, sorted(self.sources.servers)) from None

    def pin_key(self, name: str) -> str:
        """Where a server's approval is kept: its name and a digest of its exact command, env and location,
        so an approval never carries over to a changed configuration (another command, an added LD_PRELOAD)."""
        digest = hashlib.sha256(self.server(name).permission_specifier.encode()).hexdigest()[:16]
        return f"{name}#{digest}"

    def approved_tools(self, name: str) -> tuple[RemoteTool, ...] | None:
        """The approved tool list of server ``name`` as configured now (``None`` before its first approval)."""
        return self.pins.approved(self.pin_key(name))

    def withheld(self, name: str) -> ToolListChange:
        """How the server's live list differs from the approved one, as last seen (empty if unchanged)."""
        return self._withheld.get(name, ToolListChange())

    def running(self, name: str) -> bool:
        return self._connections[name].running

    # -- operator actions --------------------------------------------------------
    async def approve(self, name: str) -> ToolListChange:
        """Start the server if needed, list its tools and approve that list; returns what changed.

        This is a person's act (a CLI or desk command that has shown the server's command):
        the first approval makes a server's tools available to runs, a later one releases
        tools withheld after a change.
        """
        self.server(name)
        self._require_open()
        return await self._submit(self._approve(name))

    async def _approve(self, name: str) -> ToolListChange:
        live = await self._connections[name].list_tools()
        change = diff(self.approved_tools(name) or (), live)
        self.pins.approve(self.pin_key(name), live)
        self._withheld.pop(name, None)
        return change

    # -- calls -----------------------------------------------------------------
    async def call(
        self, server: str, tool: str, arguments: Mapping[str, Any], notices: list[Notice]
    ) -> mcp_types.CallToolResult:
        """Call ``tool`` on ``server``, starting it first when needed; run events are appended to ``notices``.

        Raises :class:`McpCallError` with ``error_kind`` ``tool_withheld`` (the tool changed since its
        approval), ``server_crashed`` (the connection died; the next call restarts it after a
        backoff), ``server_unavailable`` (it could not be started) or ``mcp_error``.
        """
        self.server(server)
        self._require_open()
        return await self._submit(self._delivering(server, self._call(server, tool, dict(arguments), notices), notices))

    async def _delivering(self, server: str, call: Coroutine[Any, Any, T], notices: list[Notice]) -> T:
        """Run ``call``, then hand over the server's queued events (a list change seen meanwhile)."""
        try:
            return await call
        finally:
            notices.extend(self._pending.pop(server, []))

    async def _call(
        self, server: str, tool: str, arguments: dict[str, Any], notices: list[Notice]
    ) -> mcp_types.CallToolResult:
        connection = self._connections[server]
        failures = connection.failures
        try:
            started, delay = await connection.ensure_started()
        except ServerCrashed as error:
            raise McpCallError(f"MCP server {server!r} is unavailable: {error}", "server_unavailable") from None
        if started:
            config = connection.config
            if connection.starts == 1:
                notices.append(
                    lambda run, ctx: McpServerStarted(
                        run_id=run, context_id=ctx, server=server, location=config.location
                    )
                )
            else:
                notices.append(
                    lambda run, ctx: McpServerRestarted(
                        run_id=run, context_id=ctx, server=server, attempt=failures, backoff_s=delay
                    )
                )
        if started or connection.list_stale or self._list_locks[server].locked():
            try:
                await self._check_list(server, notices)
            except ServerCrashed as error:
                raise self._crashed(server, tool, str(error), notices) from None
        self._refuse_withheld(server, tool)
        try:
            return await connection.call_tool(tool, arguments)
        except ServerCrashed as error:
            raise self._crashed(server, tool, str(error), notices) from None
        except Exception as error:
            raise McpCallError(f"MCP server {server!r} answered {tool!r} with an error: {error}", "mcp_error") from None

    def _crashed(self, server: str, tool: str, reason: str, notices: list[Notice]) -> McpCallError:
        notices.append(
            lambda run, ctx: McpServerCrashed(run_id=run, context_id=ctx, server=server, tool=tool, reason=reason)
        )
        return McpCallError(
            f"MCP server {server!r} stopped while running {tool!r} ({reason}); it will be restarted on the next call",
            "server_crashed",
        )

    def _refuse_withheld(self, server: str, tool: str) -> None:
        change = self._withheld.get(server)
        if change is None:
            return
        if tool in change.withheld:
            raise McpCallError(
                f"tool {tool!r} of MCP server {server!r} changed since it was approved; "
                "it is withheld until a person approves the server's tool list again",
                "tool_withheld",
            )
        if tool in change.removed:
            raise McpCallError(f"MCP server {server!r} no longer offers tool {tool!r}", "tool_withheld")

    async def _check_list(self, server: str, notices: list[Notice]) -> None:
        """Compare the live list with the approved one; a difference withholds tools and becomes an event."""
        async with self._list_locks[server]:
            self._connections[server].list_stale = False
            live = await self._connections[server].list_tools()
        change = diff(self.approved_tools(server) or (), live)
        if not change:
            self._withheld.pop(server, None)
            return
        if change == self._withheld.get(server):
            return
        self._withheld[server] = change
        notices.append(
            lambda run, ctx: McpToolListChanged(
                run_id=run,
                context_id=ctx,
                server=server,
                added=change.added,
                removed=change.removed,
                changed=change.changed,
                withheld=change.withheld,
            )
        )

    def _list_changed_callback(self, server: str) -> Callable[[], Coroutine[Any, Any, None]]:
        async def relist() -> None:
            notices: list[Notice] = []
            try:
                await self._check_list(server, notices)
            except Exception:  # the next call reports a dead connection
                return
            self._pending.setdefault(server, []).extend(notices)

        return relist

    # -- lifetime ----------------------------------------------------------------
    def _require_open(self) -> None:
        if self._closed:
            raise McpCallError("the MCP broker is closed", "server_unavailable")

    async def _submit(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self._loop))

    async def _stop_all(self) -> None:
        await asyncio.gather(*(connection.stop() for connection in self._connections.values()))

    def close(self) -> None:
        """Stop every server (stdin closed, then terminated) and the broker's loop. Idempotent."""
        if self._closed:
            return
        self._closed = True
        asyncio.run_coroutine_threadsafe(self._stop_all(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> McpBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
