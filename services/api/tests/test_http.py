"""The HTTP/SSE service against a real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from sciencediscovery.api.errors import ServiceError
from sciencediscovery.api.http import create_app
from sciencediscovery.api.http.app import ServiceParts
from sciencediscovery.api.runs import ComposedRun, RunService
from sciencediscovery.api.serve import check_binding
from sciencediscovery.api.store import SqliteSessionStore
from sciencediscovery.runtime_core import RuntimeBuilder, ToolCall
from sciencediscovery.runtime_core.testing import FunctionDispatcher, PassThroughAssembler, reply


class Desk:
    """A permission desk whose requests are answered through the API."""

    def __init__(self) -> None:
        self.requests: dict[str, asyncio.Future[str]] = {}

    def pending(self):
        return [{"id": rid, "tool": "guarded"} for rid, f in self.requests.items() if not f.done()]

    def decide(self, request_id, decision, scope):
        future = self.requests.get(request_id)
        if future is None:
            raise ValueError(f"no pending request {request_id!r}")
        future.set_result(decision)
        return {"id": request_id, "decision": decision}


class ScriptComposer:
    """Composes each run from the objective: 'slow' sleeps in a tool, 'ask' waits for a permission decision."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk

    async def compose(self, session, history, sink):
        objective = session.structured_input["objective"]
        desk = self.desk

        async def slow(arguments, context):
            await asyncio.sleep(float(arguments.get("seconds", 0.05)))
            return "slept"

        async def guarded(arguments, context):
            future = asyncio.get_running_loop().create_future()
            desk.requests[f"req-{len(desk.requests) + 1}"] = future
            async with context.waits.external("permission", "guarded(*)"):
                decision = await future
            return f"decision: {decision}"

        class Model:
            def __init__(self):
                self.calls = 0

            async def complete(self, model_input, context):
                self.calls += 1
                if self.calls == 1 and objective.startswith("slow"):
                    return reply("", ToolCall("c1", "slow", {"seconds": 30 if "forever" in objective else 0.05}))
                if self.calls == 1 and objective.startswith("ask"):
                    return reply("", ToolCall("c1", "guarded"))
                return reply(f"answer to {objective}")

        runtime = (
            RuntimeBuilder()
            .context_assembler(PassThroughAssembler())
            .model_client(Model())
            .tool_dispatcher(FunctionDispatcher({"slow": slow, "guarded": guarded}))
            .event_sink(sink)
            .build()
        )
        return ComposedRun(runtime, max_turns=5)


@pytest.fixture
def server(tmp_path) -> Iterator[tuple[str, Desk, SqliteSessionStore]]:
    yield from _serve(tmp_path, token=None)


def _serve(tmp_path, token):
    store = SqliteSessionStore(tmp_path / "sessions.sqlite")
    desk = Desk()
    app = create_app(
        ServiceParts(runs=RunService(store, ScriptComposer(desk)), permissions=desk), token=token, max_body_bytes=2048
    )
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}", desk, store
    server.should_exit = True
    thread.join(timeout=20)
    store.close()


def wait_status(client: httpx.Client, run_id: str, wanted: set[str], timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(f"/runs/{run_id}").json()
        if body["status"] in wanted:
            return body
        assert time.monotonic() < deadline, f"run {run_id} stuck in {body['status']}"
        time.sleep(0.05)


def start(client: httpx.Client, objective: str) -> tuple[str, str]:
    created = client.post("/sessions", json={"objective": objective})
    assert created.status_code == 201, created.text
    context_id = created.json()["context_id"]
    started = client.post(f"/sessions/{context_id}/runs")
    assert started.status_code == 202, started.text
    return context_id, started.json()["run_id"]


def read_sse(client: httpx.Client, context_id: str, *, last_event_id: str | None = None, until: str = "run_finished"):
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    events = []
    with client.stream("GET", f"/sessions/{context_id}/events", headers=headers, timeout=30) as response:
        assert response.status_code == 200
        current: dict[str, str] = {}
        for line in response.iter_lines():
            if not line:
                if "event" in current:
                    events.append(current)
                    if current["event"] == until:
                        return events
                current = {}
                continue
            field, _, value = line.partition(":")
            current[field] = value.strip()
    return events


def test_run_completes_and_result_is_served(server):
    base, _, _ = server
    with httpx.Client(base_url=base) as client:
        context_id, run_id = start(client, "slow survey")
        body = wait_status(client, run_id, {"completed"})
        assert body["result"]["final_answer"] == "answer to slow survey"
        assert body["context_id"] == context_id
        session = client.get(f"/sessions/{context_id}").json()
        assert [r["run_id"] for r in session["runs"]] == [run_id]


def test_sse_replays_and_resumes_without_gap_or_duplicate(server):
    base, _, _ = server
    with httpx.Client(base_url=base) as client:
        context_id, run_id = start(client, "slow survey")
        first = read_sse(client, context_id)
        kinds = [e["event"] for e in first]
        assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
        ids = [int(e["id"]) for e in first]
        assert ids == sorted(set(ids))
        middle = first[len(first) // 2]["id"]
        resumed = read_sse(client, context_id, last_event_id=middle)
        assert [e["id"] for e in resumed] == [e["id"] for e in first if int(e["id"]) > int(middle)]


def test_cancel_a_running_run(server):
    base, _, _ = server
    with httpx.Client(base_url=base) as client:
        _, run_id = start(client, "slow forever")
        wait_status(client, run_id, {"running"})
        time.sleep(0.2)
        assert client.post(f"/runs/{run_id}/cancel").status_code == 202
        body = wait_status(client, run_id, {"cancelled"})
        assert body["reason"] == "cancelled through the API"


def test_permission_request_listed_and_decided(server):
    base, desk, _ = server
    with httpx.Client(base_url=base) as client:
        _, run_id = start(client, "ask for permission")
        deadline = time.monotonic() + 20
        while not (pending := client.get("/permissions").json()):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert wait_status(client, run_id, {"waiting"})["status"] == "waiting"
        decided = client.post(f"/permissions/{pending[0]['id']}", json={"decision": "allow_once"})
        assert decided.status_code == 200
        body = wait_status(client, run_id, {"completed"})
        assert body["status"] == "completed"
        assert client.get("/permissions").json() == []


def test_bad_input_gets_problem_bodies(server):
    base, _, _ = server
    with httpx.Client(base_url=base) as client:
        missing = client.post("/sessions", json={"constraints": []})
        assert missing.status_code == 422
        assert missing.headers["content-type"] == "application/problem+json"
        assert "objective" in missing.json()["detail"]
        extra = client.post("/sessions", json={"objective": "x", "evil": True})
        assert extra.status_code == 422 and "evil" in extra.json()["detail"]
        not_json = client.post("/sessions", content=b"{nope", headers={"content-type": "application/json"})
        assert not_json.status_code == 422
        unknown = client.get("/runs/run-missing")
        assert unknown.status_code == 404 and "run-missing" in unknown.json()["detail"]
        assert client.get("/sessions/ctx-missing/events").status_code == 404
        too_big = client.post("/sessions", json={"objective": "x" * 5000})
        assert too_big.status_code == 413
        bad_decision = client.post("/permissions/req-1", json={"decision": "maybe"})
        assert bad_decision.status_code == 422
        assert client.post("/permissions/req-404", json={"decision": "deny"}).status_code == 400
        assert client.get("/openapi.json").json()["info"]["title"] == "ScienceDiscovery"


def test_bearer_token_is_required_when_configured(tmp_path):
    for base, _, _ in _serve(tmp_path, token="s3cret"):
        with httpx.Client(base_url=base) as client:
            refused = client.get("/permissions")
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"] == "Bearer"
            wrong = client.get("/permissions", headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
            ok = client.get("/permissions", headers={"Authorization": "Bearer s3cret"})
            assert ok.status_code == 200


def test_binding_off_loopback_needs_a_token():
    check_binding("127.0.0.1", None)
    check_binding("::1", None)
    check_binding("localhost", None)
    with pytest.raises(ServiceError, match="refusing to bind 0.0.0.0 without a bearer token"):
        check_binding("0.0.0.0", None)
    check_binding("0.0.0.0", "token")


def test_starting_twice_is_a_conflict(server):
    base, _, _ = server
    with httpx.Client(base_url=base) as client:
        context_id, run_id = start(client, "slow forever")
        second = client.post(f"/sessions/{context_id}/runs")
        assert second.status_code == 409
        client.post(f"/runs/{run_id}/cancel")
        wait_status(client, run_id, {"cancelled"})


def test_real_governance_permission_flow_through_the_service(tmp_path):
    """The composition root's own permission desk: an ask is listed over HTTP, decided, and the run goes on."""
    from sciencediscovery.api.bootstrap.platform import Platform
    from sciencediscovery.api.settings import ServiceSettings

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = tmp_path / "script.json"
    write = {"path": "workspace/results.md", "content": "TP53 summary"}
    script.write_text(
        __import__("json").dumps(
            {"turns": [{"tool_calls": [{"id": "w1", "name": "write_file", "arguments": write}]}, {"content": "saved"}]}
        )
    )
    settings = ServiceSettings.load(
        data_dir=tmp_path / "data",
        workspace=workspace,
        environ={"SCIENCEDISCOVERY_DISABLE_PLUGINS": "hello", "SCIENCEDISCOVERY_SCRIPTS_DIR": str(tmp_path)},
    )
    platform = Platform(settings)
    app = create_app(platform.service_parts())
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    try:
        with httpx.Client(base_url=base) as client:
            outside = client.post("/sessions", json={"objective": "x", "model": "scripted:/etc/passwd"})
            assert outside.status_code == 400 and "SCIENCEDISCOVERY_SCRIPTS_DIR" in outside.json()["detail"]
            created = client.post("/sessions", json={"objective": "Save the summary", "model": f"scripted:{script}"})
            context_id = created.json()["context_id"]
            run_id = client.post(f"/sessions/{context_id}/runs").json()["run_id"]
            deadline = time.monotonic() + 20
            while not (pending := client.get("/permissions").json()):
                assert time.monotonic() < deadline, client.get(f"/runs/{run_id}").json()
                time.sleep(0.05)
            [request] = pending
            assert (request["tool"], request["specifier"], request["context_id"]) == (
                "write_file",
                "workspace/results.md",
                context_id,
            )
            assert not (workspace / "results.md").exists()
            assert client.post("/permissions/req-nope", json={"decision": "deny"}).status_code == 404
            assert client.post(f"/permissions/{request['id']}", json={"decision": "allow_once"}).status_code == 200
            assert client.post(f"/permissions/{request['id']}", json={"decision": "deny"}).status_code in (404, 409)
            body = wait_status(client, run_id, {"completed"})
            assert body["result"]["final_answer"] == "saved"
            assert (workspace / "results.md").read_text() == "TP53 summary"
            again = client.post(f"/sessions/{context_id}/runs")
            assert again.status_code == 409 and "already answered" in again.json()["detail"]
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def test_a_streamed_body_over_the_limit_is_refused_with_413(server):
    base, _, _ = server

    def chunks():
        for _ in range(5):
            yield b'{"objective": "' + b"x" * 1000

    with httpx.Client(base_url=base) as client:
        response = client.post("/sessions", content=chunks(), headers={"content-type": "application/json"})
        assert response.status_code == 413
        assert response.headers["content-type"] == "application/problem+json"


def test_an_absurd_last_event_id_is_clamped_not_a_broken_stream(server):
    base, _, _ = server
    with httpx.Client(base_url=base) as client:
        context_id, run_id = start(client, "slow survey")
        wait_status(client, run_id, {"completed"})
        assert client.get(f"/sessions/{context_id}/events", params={"after": str(10**30)}).status_code == 422
        with client.stream(
            "GET", f"/sessions/{context_id}/events", headers={"Last-Event-ID": "9" * 40}, timeout=5
        ) as response:
            assert response.status_code == 200  # nothing after the largest id; the stream stays healthy
            response.close()


def test_unauthenticated_service_refuses_foreign_host_names(server):
    base, _, _ = server
    with httpx.Client(base_url=base) as client:
        assert client.get("/permissions", headers={"Host": "evil.example"}).status_code == 400
        assert client.get("/permissions", headers={"Host": "localhost"}).status_code == 200
