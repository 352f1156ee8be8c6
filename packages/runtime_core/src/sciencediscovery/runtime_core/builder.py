"""RuntimeBuilder: the typed registration surface of the kernel."""

from __future__ import annotations

import asyncio
import inspect
import types
from collections.abc import Mapping
from typing import Any

from .errors import DuplicatePortError, FrozenRegistryError, MissingPortsError, PortTypeError
from .loop import AgentLoop
from .ports import PORTS, ContextAssembler, ModelClient, RunEventSink, ToolDispatcher
from .results import RunRequest, RunResult

_ASYNC_METHODS = {"context_assembler": "assemble", "model_client": "complete", "tool_dispatcher": "dispatch"}


class RuntimeBuilder:
    """Collects the four ports; :meth:`build` returns a :class:`Runtime` with a frozen registry."""

    def __init__(self) -> None:
        self._ports: dict[str, object] = {}
        self._frozen = False

    def context_assembler(self, assembler: ContextAssembler) -> RuntimeBuilder:
        return self._register("context_assembler", assembler)

    def model_client(self, client: ModelClient) -> RuntimeBuilder:
        return self._register("model_client", client)

    def tool_dispatcher(self, dispatcher: ToolDispatcher) -> RuntimeBuilder:
        return self._register("tool_dispatcher", dispatcher)

    def event_sink(self, sink: RunEventSink) -> RuntimeBuilder:
        return self._register("event_sink", sink)

    def _register(self, port: str, implementation: object) -> RuntimeBuilder:
        if self._frozen:
            raise FrozenRegistryError(f"cannot register {port}: the runtime was already built and its ports are frozen")
        if port in self._ports:
            raise DuplicatePortError(f"{port} is already registered ({type(self._ports[port]).__name__})")
        protocol = PORTS[port]
        if not isinstance(implementation, protocol):
            raise PortTypeError(f"{port} must implement {protocol.__name__}; {type(implementation).__name__} does not")
        method = _ASYNC_METHODS.get(port)
        if method and not inspect.iscoroutinefunction(getattr(implementation, method)):
            raise PortTypeError(f"{port}: {type(implementation).__name__}.{method} must be an async method")
        self._ports[port] = implementation
        return self

    def build(self) -> Runtime:
        missing = [port for port in PORTS if port not in self._ports]
        if missing:
            raise MissingPortsError(missing)
        self._frozen = True
        return Runtime(types.MappingProxyType(dict(self._ports)))


class RunHandle:
    """A started run: await :meth:`result`, or :meth:`cancel` it."""

    def __init__(self, loop: AgentLoop, task: asyncio.Task[RunResult]) -> None:
        self._loop = loop
        self._task = task

    @property
    def run_id(self) -> str:
        return self._loop.request.run_id

    @property
    def status(self) -> str:
        """``running``, ``waiting`` (an external wait is open) or the terminal status."""
        if self._task.done() and not self._task.cancelled():
            return self._task.result().status.value
        return "waiting" if self._loop.waits.pending else "running"

    def cancel(self, reason: str = "the run was cancelled") -> None:
        if not self._task.done() and not self._loop.finished:
            self._loop.cancel_reason = reason
            self._task.cancel()

    async def result(self) -> RunResult:
        """Wait for the terminal result (waiting does not cancel the run if the waiter is cancelled)."""
        return await asyncio.shield(self._task)

    async def finished(self) -> None:
        """Wait until the run has ended, whatever its status."""
        await asyncio.wait([self._task])


class Runtime:
    """A composed kernel. Its ports are fixed for its lifetime."""

    def __init__(self, ports: Mapping[str, Any]) -> None:
        self._ports = ports

    @property
    def ports(self) -> Mapping[str, Any]:
        """The registered ports (read-only)."""
        return self._ports

    def start(self, request: RunRequest) -> RunHandle:
        """Start a run in a new task; must be called inside a running event loop."""
        loop = AgentLoop(self._ports, request)
        return RunHandle(loop, asyncio.get_running_loop().create_task(loop.run()))

    async def run(self, request: RunRequest) -> RunResult:
        """Run to the terminal result. Cancelling the caller cancels the run, closes its open calls, then re-raises."""
        handle = self.start(request)
        try:
            return await handle.result()
        except asyncio.CancelledError:
            handle.cancel()
            await handle.finished()
            raise
