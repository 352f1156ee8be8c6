"""Shared fixtures: a real TurnContext over a collecting sink, and a small tool factory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sciencediscovery.runtime_core import CollectingSink, ExternalWaits, TurnContext
from sciencediscovery.tools import ToolDefinition, ToolInvocation

OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


@pytest.fixture
def sink() -> CollectingSink:
    return CollectingSink()


@pytest.fixture
def context(sink: CollectingSink) -> Callable[..., TurnContext]:
    """``context(turn=1, run_id="run-1")``: a TurnContext whose events go to ``sink``."""

    def make(turn: int = 1, run_id: str = "run-1") -> TurnContext:
        waits = ExternalWaits(run_id, "ctx-1", sink.emit)
        waits.turn = turn
        return TurnContext(run_id=run_id, context_id="ctx-1", turn=turn, events=sink, waits=waits)

    return make


@pytest.fixture
def tool() -> Callable[..., ToolDefinition]:
    """``tool(name, reply="ok", **fields)``: a tool whose async handler returns ``reply`` or ``reply(invocation)``."""

    def make(name: str, reply: Callable[[ToolInvocation], Any] | str = "ok", **fields: Any) -> ToolDefinition:
        async def handler(invocation: ToolInvocation) -> Any:
            return reply(invocation) if callable(reply) else reply

        fields.setdefault("parameters", OBJECT_SCHEMA)
        fields.setdefault("description", f"The {name} tool.")
        return ToolDefinition(name=name, handler=handler, **fields)

    return make
