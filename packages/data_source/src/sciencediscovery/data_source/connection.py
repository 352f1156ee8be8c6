"""One MCP server connection on the broker's event loop: lazy start, crash detection, restart with backoff."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, cast

import httpx2
import mcp_types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from .config import HttpServer, ServerConfig, StdioServer
from .fingerprint import RemoteTool

BACKOFF_BASE_S = 0.25
BACKOFF_MAX_S = 8.0
STOP_TIMEOUT_S = 10.0


def backoff_s(failures: int) -> float:
    """Delay before restart number ``failures`` (0 for none): 0.25 s doubling up to 8 s."""
    return 0.0 if failures <= 0 else min(BACKOFF_BASE_S * 2 ** (failures - 1), BACKOFF_MAX_S)


def describe(error: BaseException) -> str:
    """``Type: message`` of the first leaf of an exception group (what actually went wrong)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"


class ServerCrashed(Exception):
    """The connection died while a request was in flight (process exit, closed pipe, HTTP failure)."""


class McpConnection:
    """Owns one server's MCP client in a task of the broker loop (the SDK's contexts need one owner task).

    The session uses the initialize handshake (the SDK's ``legacy`` mode), on which servers
    announce ``notifications/tools/list_changed`` unprompted. Such an announcement marks
    the list stale and schedules ``on_list_changed``.
    """

    def __init__(
        self,
        config: ServerConfig,
        secrets: Mapping[str, str],
        on_list_changed: Callable[[], Coroutine[Any, Any, None]],
    ) -> None:
        self.config = config
        self._secrets = secrets
        self._on_list_changed = on_list_changed
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self.starts = 0
        self.failures = 0
        self.list_stale = False
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> bool:
        return self._client is not None

    def _target(self) -> Any:
        config = self.config
        if isinstance(config, StdioServer):
            env = {**get_default_environment(), **config.env}
            return StdioServerParameters(command=config.command, args=list(config.args), env=env, cwd=config.cwd)
        assert isinstance(config, HttpServer)
        where = f"mcpServers.{config.name}"
        headers = {name: ref.resolve(self._secrets, where) for name, ref in config.headers.items()}
        timeout = httpx2.Timeout(30.0, read=300.0)
        return streamable_http_client(config.url, http_client=httpx2.AsyncClient(headers=headers, timeout=timeout))

    async def _message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.list_stale = True
            task = asyncio.get_running_loop().create_task(self._on_list_changed())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _own(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        try:
            async with Client(self._target(), cache=None, message_handler=self._message, mode="legacy") as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
            elif not isinstance(error, Exception):
                raise

    async def ensure_started(self) -> tuple[bool, float]:
        """Start the server unless it runs; returns (started now, backoff waited)."""
        async with self._lock:
            if self._client is not None:
                return False, 0.0
            delay = backoff_s(self.failures)
            if delay:
                await asyncio.sleep(delay)
            ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._owner = asyncio.create_task(self._own(ready, self._stop))
            try:
                self._client = await ready
            except Exception as error:
                self.failures += 1
                raise ServerCrashed(f"could not start: {describe(error)}") from error
            self.starts += 1
            return True, delay

    async def list_tools(self) -> tuple[RemoteTool, ...]:
        client = await self._require()
        tools: list[RemoteTool] = []
        cursor: str | None = None
        while True:
            page = await self._guard(client.list_tools(cursor=cursor))
            tools += [RemoteTool(t.name, t.description or "", dict(t.input_schema)) for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return tuple(tools)

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> mcp_types.CallToolResult:
        client = await self._require()
        result = cast(mcp_types.CallToolResult, await self._guard(client.call_tool(name, dict(arguments))))
        self.failures = 0
        return result

    async def _require(self) -> Client:
        await self.ensure_started()
        assert self._client is not None
        return self._client

    async def _guard(self, request: Awaitable[Any]) -> Any:
        """Run one request; a dead connection is torn down and reported as :class:`ServerCrashed`."""
        try:
            return await request
        except Exception as error:
            closed = isinstance(error, MCPError) and error.code == mcp_types.CONNECTION_CLOSED
            transport = isinstance(error, OSError | httpx2.TransportError | EOFError)
            owner_ended = self._owner is not None and self._owner.done()
            if not (closed or transport or owner_ended):
                raise
            reason = describe(error)
        self.failures += 1
        await self.stop()
        raise ServerCrashed(reason)

    async def stop(self) -> None:
        """Close the session and end the server process (stdin closed, then terminate, then kill)."""
        stop, owner = self._stop, self._owner
        self._client = self._stop = self._owner = None
        if stop is not None:
            stop.set()
        if owner is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(owner, STOP_TIMEOUT_S)
