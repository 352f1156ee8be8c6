"""The FastAPI application: sessions, runs, SSE events, permission decisions, results, artifacts, provenance."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Literal, Protocol

import attrs
from fastapi import FastAPI, Header, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.middleware.trustedhost import TrustedHostMiddleware

from sciencediscovery.runtime_core import Message
from sciencediscovery.runtime_core.serialization import event_to_json

from ..runs import RunService
from . import problems
from .guards import BearerTokenGuard, BodySizeLimit

MAX_EVENT_ID = 2**63 - 1
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


class PermissionDesk(Protocol):
    """What the API needs of the permission-decision queue (the composition root adapts governance)."""

    def pending(self) -> list[Mapping[str, Any]]: ...

    def decide(self, request_id: str, decision: str, scope: str | None) -> Mapping[str, Any]: ...


@attrs.frozen
class ServiceParts:
    """Everything the HTTP layer serves, assembled by the composition root."""

    runs: RunService
    permissions: PermissionDesk | None = None
    artifacts: Callable[[str], list[Mapping[str, Any]]] | None = None
    provenance: Callable[[str], Mapping[str, Any]] | None = None
    check_model: Callable[[str], None] | None = None


class SessionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    objective: str = Field(min_length=1, max_length=20_000)
    constraints: list[str] = Field(default_factory=list, max_length=100)
    outputRequirements: list[str] = Field(default_factory=list, max_length=100)
    model: str | None = Field(default=None, max_length=500)
    mode: Literal["dynamic", "shadow", "legacy"] | None = None
    scope: Literal["main", "subagent", "reviewer"] = "main"
    max_turns: int | None = Field(default=None, ge=1, le=10_000)


class DecisionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decision: Literal["allow_once", "allow_matching", "deny"]
    scope: Literal["once", "conversation", "session", "project"] | None = None


def create_app(parts: ServiceParts, *, token: str | None = None, max_body_bytes: int = 1_000_000) -> FastAPI:
    """Build the ASGI app. With ``token`` every request needs ``Authorization: Bearer <token>``."""
    runs = parts.runs

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await runs.shutdown()

    app = FastAPI(
        title="ScienceDiscovery",
        version="0.1.0",
        summary="Governed scientific agent runs over HTTP/SSE",
        lifespan=lifespan,
    )
    problems.install(app)
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)
    app.add_middleware(BearerTokenGuard, token=token)
    if not token:  # unauthenticated means loopback only: refuse other Host names (DNS rebinding)
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(LOOPBACK_HOSTS))

    @app.post("/sessions", status_code=201)
    async def create_session(body: SessionIn) -> dict[str, Any]:
        if body.model and parts.check_model:
            parts.check_model(body.model)
        structured = {
            "objective": body.objective,
            "constraints": body.constraints,
            "outputRequirements": body.outputRequirements,
        }
        config = {
            k: v
            for k, v in {
                "model": body.model,
                "mode": body.mode,
                "scope": body.scope,
                "max_turns": body.max_turns,
            }.items()
            if v is not None
        }
        session = runs.create_session(structured, config)
        return {"context_id": session.context_id}

    @app.get("/sessions/{context_id}")
    async def get_session(context_id: str) -> dict[str, Any]:
        session = runs.store.get_session(context_id)
        return {
            "context_id": session.context_id,
            "structured_input": session.structured_input,
            "config": session.config,
            "runs": [attrs.asdict(r) for r in runs.store.runs_of(context_id)],
        }

    @app.post("/sessions/{context_id}/runs", status_code=202)
    async def start_run(context_id: str) -> dict[str, Any]:
        session = runs.store.get_session(context_id)
        run_id = await runs.start(context_id, Message.user(session.structured_input["objective"]))
        return {"run_id": run_id, "context_id": context_id}

    @app.get("/runs/{run_id}")
    async def get_run(run_id: str) -> dict[str, Any]:
        record = runs.store.get_run(run_id)
        return {**attrs.asdict(record), "status": runs.status(run_id)}

    @app.post("/runs/{run_id}/cancel", status_code=202)
    async def cancel_run(run_id: str) -> dict[str, Any]:
        runs.cancel(run_id)
        return {"run_id": run_id, "cancel_requested": True}

    @app.get("/sessions/{context_id}/events")
    async def events(
        request: Request,
        context_id: str,
        last_event_id: str | None = Header(default=None),
        after: int = Query(default=0, ge=0, le=MAX_EVENT_ID),
    ) -> EventSourceResponse:
        runs.store.get_session(context_id)
        start = after
        if last_event_id and last_event_id.isdigit():
            start = min(int(last_event_id), MAX_EVENT_ID)
        return EventSourceResponse(_stream(runs, context_id, start, request), ping=15)

    @app.get("/permissions")
    async def pending_permissions() -> list[Mapping[str, Any]]:
        return parts.permissions.pending() if parts.permissions else []

    @app.post("/permissions/{request_id}")
    async def decide(request_id: str, body: DecisionIn) -> Mapping[str, Any]:
        if parts.permissions is None:
            return problems.problem(404, "Not Found", "permission governance is not installed")  # type: ignore[return-value]
        return parts.permissions.decide(request_id, body.decision, body.scope)

    @app.get("/sessions/{context_id}/artifacts")
    async def artifacts(context_id: str) -> list[Mapping[str, Any]]:
        runs.store.get_session(context_id)
        return parts.artifacts(context_id) if parts.artifacts else []

    @app.get("/sessions/{context_id}/provenance")
    async def provenance(context_id: str) -> Mapping[str, Any]:
        runs.store.get_session(context_id)
        return parts.provenance(context_id) if parts.provenance else {}

    return app


async def _stream(runs: RunService, context_id: str, after_id: int, request: Request) -> AsyncIterator[ServerSentEvent]:
    """Replay stored events after ``after_id``, then follow live ones.

    Ids are the store's, so a client resuming with Last-Event-ID sees no gap and no duplicate.
    """
    queue = runs.live.subscribe(context_id)
    last = after_id
    try:
        while True:
            for stored in runs.store.events_after(context_id, last):
                last = stored.id
                yield ServerSentEvent(data=json.dumps(stored.data), event=stored.kind, id=str(stored.id))
            if await request.is_disconnected():
                return
            try:
                live = await asyncio.wait_for(queue.get(), timeout=1.0)
            except TimeoutError:
                continue
            if live is not None and live.kind == "model_stream_delta":
                yield ServerSentEvent(data=json.dumps(event_to_json(live), default=str), event=live.kind)
    finally:
        runs.live.unsubscribe(context_id, queue)
