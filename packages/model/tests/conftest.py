"""A loopback HTTP server that answers provider SDK requests with scripted replies, and shared fixtures."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs
import pytest

from sciencediscovery.runtime_core import CollectingSink, ExternalWaits, ModelInput, RunEvent, TurnContext

HOLD_LIMIT_S = 10.0


@attrs.define
class Reply:
    """One scripted HTTP answer.

    ``events`` are written one at a time as an SSE stream (``body`` is a plain
    JSON body otherwise). ``stall`` waits before answering at all; ``hang``
    keeps the stream open after the events until the client disconnects.
    """

    status: int = 200
    headers: dict[str, str] = attrs.Factory(dict)
    body: Any = None
    events: list[str] = attrs.Factory(list)
    stall: bool = False
    hang: bool = False


@attrs.define
class Received:
    method: str
    path: str
    headers: dict[str, str]
    json: Any


class LoopbackServer:
    """A real HTTP server on 127.0.0.1 that pops one :class:`Reply` per request and records each request."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Received] = []
        self.disconnected = threading.Event()
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                server.requests.append(
                    Received(
                        "POST",
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        json.loads(raw) if raw else None,
                    )
                )
                reply = server.replies.popleft() if server.replies else Reply(500, body={"error": "no reply scripted"})
                if reply.stall:
                    server.release.wait(HOLD_LIMIT_S)
                    return
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if reply.events:
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for event in reply.events:
                        self.wfile.write(event.encode())
                        self.wfile.flush()
                    if reply.hang:
                        self._hold_open()
                    return
                payload = json.dumps(reply.body).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _hold_open(self) -> None:
                deadline = time.monotonic() + HOLD_LIMIT_S
                while time.monotonic() < deadline and not server.release.is_set():
                    try:
                        self.wfile.write(b": keep-alive\n\n")
                        self.wfile.flush()
                    except OSError:
                        server.disconnected.set()
                        return
                    time.sleep(0.02)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def close(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event with a JSON (or literal string) payload."""
    payload = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    server = LoopbackServer()
    yield server
    server.close()


@pytest.fixture
def sse_event() -> Any:
    return sse


@pytest.fixture
def reply() -> type[Reply]:
    return Reply


@attrs.define
class TurnHarness:
    """A TurnContext whose sink collects events, as the kernel would hand a model client."""

    sink: CollectingSink
    context: TurnContext


@pytest.fixture
def turn() -> TurnHarness:
    sink = CollectingSink()
    context = TurnContext("run-1", "ctx-1", 1, sink, ExternalWaits("run-1", "ctx-1", sink.emit))
    return TurnHarness(sink, context)


@pytest.fixture
def recorded_sleeps() -> list[float]:
    return []


@pytest.fixture
def fake_sleep(recorded_sleeps: list[float]) -> Any:
    """An injectable sleep that records the backoff delays instead of waiting them out."""

    async def sleep(delay: float) -> None:
        recorded_sleeps.append(delay)

    return sleep


class _FirstDeltaSink:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []
        self.first_delta = asyncio.Event()

    def emit(self, event: RunEvent) -> None:
        self.events.append(event)
        if event.kind == "model_stream_delta":
            self.first_delta.set()


async def _cancel_after_first_delta(client: Any, model_input: ModelInput) -> None:
    sink = _FirstDeltaSink()
    context = TurnContext("run-1", "ctx-1", 1, sink, ExternalWaits("run-1", "ctx-1", sink.emit))
    task = asyncio.create_task(client.complete(model_input, context))
    await asyncio.wait_for(sink.first_delta.wait(), HOLD_LIMIT_S)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.fixture
def cancel_after_first_delta() -> Any:
    """Run ``client.complete`` in a task and cancel it as soon as the first stream delta is emitted."""
    return _cancel_after_first_delta
