"""The ``memory`` state channel: what this run wrote to memory, projected as runtime data."""

from __future__ import annotations

from typing import Any

import attrs

from sciencediscovery.runtime_core import Message, ToolCall

from .tools import WRITE_KEY

SHOWN_WRITES = 20


@attrs.frozen
class MemoryChannel:
    """Reduces ``memory_write`` results (their ``metadata["memory_write"]``) into the run's list of writes."""

    name: str = "memory"
    initial: tuple[dict[str, Any], ...] = ()

    def apply(self, state: tuple[dict[str, Any], ...], call: ToolCall, result: Message) -> tuple[dict[str, Any], ...]:
        written = result.metadata.get(WRITE_KEY)
        if not isinstance(written, dict):
            return state
        return (*state, {"entity": written.get("entity"), "observation_id": written.get("observation_id")})

    def render(self, state: tuple[dict[str, Any], ...]) -> dict[str, Any] | None:
        if not state:
            return None
        return {"written_this_run": len(state), "latest": list(state[-SHOWN_WRITES:])}
