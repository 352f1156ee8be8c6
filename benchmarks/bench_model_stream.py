"""Model client overhead: stream assembly, a scripted turn, and an OpenAI-SDK turn on a loopback server.

Prints figures and ratios, never assertions:
- StreamAccumulator: parts per second for a 2,000-part answer (text and split tool-call arguments);
- ProviderModelClient over the scripted provider: time per turn;
- ProviderModelClient over the openai provider against a 127.0.0.1 SSE server sending 500 chunks,
  against the bare SDK iterating the same stream: the client's normalization overhead as a ratio.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from sciencediscovery.model import (
    ClientSettings,
    ProviderModelClient,
    ProviderRegistry,
    StreamAccumulator,
    TextDelta,
    ToolCallDelta,
)
from sciencediscovery.model.plugin import BUILTIN_PROVIDERS
from sciencediscovery.runtime_core import ExternalWaits, Message, ModelInput, NullSink, TurnContext

REPEATS = 5
CHUNKS = 500
INPUT = ModelInput("You are careful.", [Message.user("hi")])


def context() -> TurnContext:
    sink = NullSink()
    return TurnContext("bench", "bench", 1, sink, ExternalWaits("bench", "bench", sink.emit))


def bench_accumulator() -> float:
    arguments = json.dumps({"query": "TP53 resistance " * 200})
    step = len(arguments) // 1000 + 1
    fragments = [arguments[i : i + step] for i in range(0, len(arguments), step)]
    parts: list[TextDelta | ToolCallDelta] = [TextDelta("token ") for _ in range(1000)]
    parts += [ToolCallDelta(0, "call_1", "search", fragments[0])] + [
        ToolCallDelta(0, arguments=f) for f in fragments[1:]
    ]
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        accumulator = StreamAccumulator("bench")
        for part in parts:
            accumulator.add(part)
        accumulator.response("bench")
        times.append(time.perf_counter() - started)
    return len(parts) / statistics.median(times)


def bench_scripted(turns: int = 500) -> float:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "script.json"
        script = {
            "turns": [
                {"content": "answer", "tool_calls": [{"name": "noop", "arguments": {"i": i}}]} for i in range(turns)
            ]
        }
        path.write_text(json.dumps(script))
        client = ProviderModelClient(ProviderRegistry(BUILTIN_PROVIDERS).create(f"scripted:{path}", environ={}))

        async def run() -> float:
            started = time.perf_counter()
            for _ in range(turns):
                await client.complete(INPUT, context())
            return time.perf_counter() - started

        return asyncio.run(run()) / turns


def serve_stream() -> tuple[ThreadingHTTPServer, str]:
    chunks = []
    for i in range(CHUNKS):
        delta = {"content": f"tok{i} "}
        body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}  # fmt: skip
        chunks.append(f"data: {json.dumps(body)}\n\n")
    final = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
             "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}  # fmt: skip
    payload = ("".join(chunks) + f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n").encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return None

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def bench_openai(base_url: str, rounds: int = 20) -> tuple[float, float]:
    import openai

    settings = ClientSettings(timeout_s=30)
    environ = {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": base_url}
    client = ProviderModelClient(
        ProviderRegistry(BUILTIN_PROVIDERS).create("openai:m", settings=settings, environ=environ)
    )
    bare = openai.AsyncOpenAI(api_key="sk-bench", base_url=base_url, max_retries=0)

    async def through_client() -> float:
        started = time.perf_counter()
        await client.complete(INPUT, context())
        return time.perf_counter() - started

    async def through_sdk() -> float:
        started = time.perf_counter()
        stream = await bare.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        async for _chunk in stream:
            pass
        return time.perf_counter() - started

    async def run() -> tuple[float, float]:
        await through_client()
        await through_sdk()
        ours = [await through_client() for _ in range(rounds)]
        sdk = [await through_sdk() for _ in range(rounds)]
        return statistics.median(ours), statistics.median(sdk)

    return asyncio.run(run())


def main() -> None:
    print(f"stream assembly: {bench_accumulator():,.0f} parts/s")
    print(f"scripted turn through ProviderModelClient: {bench_scripted() * 1e6:,.0f} us/turn")
    if importlib.util.find_spec("openai") is None:
        print("openai SDK not installed: skipping the loopback SDK comparison")
        return
    server, base_url = serve_stream()
    try:
        ours, sdk = bench_openai(base_url)
    finally:
        server.shutdown()
        server.server_close()
    print(f"openai turn of {CHUNKS} chunks on 127.0.0.1: client {ours * 1e3:.1f} ms, bare SDK {sdk * 1e3:.1f} ms, "
          f"ratio {ours / sdk:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
