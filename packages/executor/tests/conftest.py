"""Shared fixtures: a workspace on disk, a real loopback HTTP server, and executors with small limits."""

from __future__ import annotations

import asyncio
import http.server
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.executor import Executor, ExecutorConfig
from sciencediscovery.runtime_core import CollectingSink, ExternalWaits, ToolCall, TurnContext
from sciencediscovery.tools.definitions import ToolInvocation, ToolOutput

SMALL_LIMITS = {
    "cpu_seconds": 1,
    "wall_seconds": 5,
    "processes": 16,
    "memory_mb": 512,
    "output_bytes": 1_000_000,
    "file_mb": 16,
    "capture_bytes": 4096,
}


class Workspace:
    """A read-write ``data`` mount, a read-only ``reference`` mount, and a directory outside both."""

    def __init__(self, root: Path) -> None:
        self.data = root / "data"
        self.reference = root / "reference"
        self.outside = root / "outside"
        self.outputs = root / "outputs"
        for directory in (self.data, self.reference, self.outside, self.outputs):
            directory.mkdir()
        (self.reference / "protocol.txt").write_text("original protocol\n")
        (self.outside / "secret.txt").write_text("host secret\n")

    def settings(self, **executor: Any) -> dict[str, Any]:
        section = {"output_dir": str(self.outputs), "limits": dict(SMALL_LIMITS), **executor}
        return {
            "workspace_mounts": [
                {"name": "data", "path": str(self.data), "mode": "read_write"},
                {"name": "reference", "path": str(self.reference), "mode": "read_only"},
            ],
            "network_allowed": False,
            "executor": section,
        }


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


@pytest.fixture(scope="module")
def shared_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("workspace"))


@pytest.fixture(scope="module")
def sandboxed(shared_workspace: Workspace) -> Executor:
    """One executor for a module; fails loudly (never skips) when the sandbox cannot run here."""
    executor = Executor(ExecutorConfig.from_settings(shared_workspace.settings()))
    status = asyncio.run(executor.status())
    assert status.available, f"the sandbox must run on this machine: {status.reason}"
    return executor


class LoopbackServer:
    """A real HTTP server on 127.0.0.1 of the host that counts the requests it receives."""

    def __init__(self) -> None:
        self.requests = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests += 1
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"reached the host")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def loopback_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer()
    yield server
    server.close()


def invocation(
    name: str, arguments: dict[str, Any], call_id: str = "call-1", run_id: str = "run-test"
) -> ToolInvocation:
    """A tool invocation as the dispatcher would build it."""
    sink = CollectingSink()
    context = TurnContext(
        run_id=run_id, context_id="ctx", turn=1, events=sink, waits=ExternalWaits(run_id, "ctx", sink.emit)
    )
    return ToolInvocation(
        call=ToolCall(id=call_id, name=name, arguments=arguments), arguments=arguments, context=context
    )


@pytest.fixture
def make_invocation() -> Callable[..., ToolInvocation]:
    return invocation


async def _tool_output(
    handler: Callable[[ToolInvocation], Awaitable[ToolOutput | str]], call: ToolInvocation
) -> ToolOutput:
    output = await handler(call)
    assert isinstance(output, ToolOutput), output
    return output


@pytest.fixture
def tool_output() -> Callable[..., Coroutine[Any, Any, ToolOutput]]:
    """``await tool_output(handler, invocation)``: a handler's answer, checked to be a ToolOutput."""
    return _tool_output
