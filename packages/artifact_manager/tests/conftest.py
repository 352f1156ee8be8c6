"""Fixtures: a real HTTP server on 127.0.0.1 and a real kernel run with the artifact manager's plugin."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import pytest

from sciencediscovery.artifact_manager import plugin as artifact_plugin
from sciencediscovery.context import RunStateChannels, discover_state_channels
from sciencediscovery.context import plugin as context_plugin
from sciencediscovery.runtime_core import (
    CollectingSink,
    FanOutSink,
    Message,
    RunRequest,
    RunResult,
    RuntimeBuilder,
    make_plugin_manager,
)
from sciencediscovery.runtime_core.testing import ListModelClient, PassThroughAssembler, ScriptStep
from sciencediscovery.tools import plugin as tools_plugin
from sciencediscovery.tools.compose import build_tools


@attrs.frozen
class Verdict:
    allowed: bool
    reason: str


class PolicyDouble:
    """Stands in for governance's NetworkPolicy (not a dependency of this package): ``check_url``
    allows a URL when ``allows(url)`` is true and records every URL it was asked about."""

    def __init__(self, allows: Callable[[str], bool]) -> None:
        self.allows = allows
        self.checked: list[str] = []

    def check_url(self, url: str) -> Verdict:
        self.checked.append(url)
        allowed = self.allows(url)
        return Verdict(allowed, f"test policy {'allows' if allowed else 'refuses'} {url}")


CSV = b"gene,expression\nTP53,4.2\nBRCA1,1.3\n"
BIG = b"x" * 5000


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/data.csv":
            self._send(CSV, declare=True)
        elif self.path == "/big":
            self._send(BIG, declare=True)
        elif self.path == "/big-undeclared":
            self._send(BIG, declare=False)
        elif self.path == "/moved":
            self._redirect("/data.csv")
        elif self.path == "/elsewhere":
            self._redirect(f"http://localhost:{self.server.server_address[1]}/data.csv")
        elif self.path == "/loop":
            self._redirect("/loop")
        else:
            self.send_error(404)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send(self, body: bytes, *, declare: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if declare:
            self.send_header("Content-Length", str(len(body)))
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        for start in range(0, len(body), 1000):
            self.wfile.write(body[start : start + 1000])
            self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture(scope="session")
def http_base() -> Iterator[str]:
    """Base URL of a real HTTP server on 127.0.0.1 serving /data.csv, /big, /big-undeclared and
    redirects /moved (same origin), /elsewhere (to localhost), /loop (to itself); 404 otherwise."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def settings(tmp_path: Path) -> dict[str, Any]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return {"data_dir": tmp_path / "data", "workspace_dir": workspace, "artifact_max_download_bytes": 1024}


@attrs.define
class KernelRun:
    result: RunResult
    channels: RunStateChannels
    events: CollectingSink

    def result_of(self, call_id: str) -> Message:
        return next(m for m in self.result.history if m.tool_call_id == call_id)


async def kernel_run(
    settings: Mapping[str, Any], script: Sequence[ScriptStep], *, plugins: Iterable[object] = ()
) -> KernelRun:
    manager = make_plugin_manager(
        load_entry_points=False, plugins=[tools_plugin, context_plugin, artifact_plugin, *plugins]
    )
    tools = build_tools(manager, settings)
    channels = RunStateChannels(discover_state_channels(manager, settings))
    events = CollectingSink()
    runtime = (
        RuntimeBuilder()
        .context_assembler(PassThroughAssembler("", tools.registry.visible_specs(1)))
        .model_client(ListModelClient(script))
        .tool_dispatcher(tools.dispatcher)
        .event_sink(FanOutSink([channels, events]))
        .build()
    )
    result = await runtime.run(RunRequest("ctx-1", [Message.user("go")]))
    return KernelRun(result, channels, events)


@pytest.fixture
def run_kernel() -> Callable[..., Any]:
    return kernel_run


@pytest.fixture
def policy() -> Callable[[Callable[[str], bool]], PolicyDouble]:
    """Builds a network policy double from a predicate on the URL."""
    return PolicyDouble


@pytest.fixture
def csv_body() -> bytes:
    """What the server returns for /data.csv (and /moved)."""
    return CSV


@pytest.fixture
def big_body() -> bytes:
    """What the server returns for /big and /big-undeclared (more than the test limit of 1024 bytes)."""
    return BIG
