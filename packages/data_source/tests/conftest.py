"""Real servers for the tests: the npm reference MCP servers (stdio), a Python MCP server over streamable
HTTP, a loopback web server, and a kernel-run harness whose assembler shows the registry's visible tools."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

NPM_PACKAGES = {
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
}
HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # the tests import their helper module ds_helpers
_installed: dict[str, str] = {}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _installed:
        terminalreporter.write_sep("-", "MCP reference servers used (npm)")
        for name, version in sorted(_installed.items()):
            terminalreporter.write_line(f"{name}@{version}")


@pytest.fixture(scope="session")
def npm_servers() -> dict[str, Path]:
    """The two reference servers installed with npm into a folder keyed by their pinned versions (reused)."""
    npm = shutil.which("npm")
    assert npm and shutil.which("node"), "node and npm are needed for the MCP reference server tests"
    key = hashlib.sha256(json.dumps(NPM_PACKAGES, sort_keys=True).encode()).hexdigest()[:12]
    prefix = Path(os.environ.get("SCIENCE_AGENT_TEST_NPM_DIR", "/tmp")) / f"sciencediscovery-mcp-npm-{key}"
    modules = prefix / "node_modules"
    entry = {name: modules / name / "dist" / "index.js" for name in NPM_PACKAGES}
    if not all(path.is_file() for path in entry.values()):
        specs = [f"{name}@{version}" for name, version in NPM_PACKAGES.items()]
        subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", *specs],
            check=True,
            timeout=600,
        )
    for name in NPM_PACKAGES:
        _installed[name] = json.loads((modules / name / "package.json").read_text())["version"]
    assert _installed == NPM_PACKAGES
    return {
        "everything": entry["@modelcontextprotocol/server-everything"],
        "filesystem": entry["@modelcontextprotocol/server-filesystem"],
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


class LiteratureServer:
    """The Python MCP server of ``literature_server.py`` in a subprocess (uvicorn on 127.0.0.1)."""

    def __init__(self, variant: str = "original", port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "literature_server.py"), str(self.port), "--variant", variant],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.process)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture
def literature_server() -> Iterator[Callable[..., LiteratureServer]]:
    """``literature_server(variant="original")`` starts one; all are stopped after the test."""
    started: list[LiteratureServer] = []

    def start(variant: str = "original", port: int | None = None) -> LiteratureServer:
        started.append(LiteratureServer(variant, port))
        return started[-1]

    yield start
    for server in started:
        server.stop()


# -- a loopback web server -------------------------------------------------------------
Route = Callable[[http.server.BaseHTTPRequestHandler], tuple[int, dict[str, str], bytes]]


class WebServer:
    """A threaded HTTP server on 127.0.0.1 answering from ``routes``; ``hits`` counts requests per path."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.hits: dict[str, int] = {}
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.hits[self.path] = outer.hits.get(self.path, 0) + 1
                route = outer.routes.get(self.path)
                status, headers, body = route(self) if route else (404, {}, b"not found")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def web_server() -> Iterator[Callable[[dict[str, Route]], WebServer]]:
    servers: list[WebServer] = []

    def start(routes: dict[str, Route]) -> WebServer:
        servers.append(WebServer(routes))
        return servers[-1]

    yield start
    for server in servers:
        server.httpd.shutdown()
        server.httpd.server_close()
