"""The ``artifacts`` state channel: files announced in successful tool results, projected as runtime data."""

from __future__ import annotations

from typing import Any

import attrs

from sciencediscovery.runtime_core import Message, ToolCall

from .observer import ARTIFACTS_KEY

SHOWN_ARTIFACTS = 20
"""How many of the latest artifacts the channel renders."""
_FIELDS = ("artifact_id", "name", "kind", "media_type", "size", "path")


@attrs.frozen
class ArtifactsChannel:
    """Reduces every result's ``metadata["artifacts"]`` into the run's artifact list (latest entry per id or path)."""

    name: str = "artifacts"
    initial: tuple[dict[str, Any], ...] = ()

    def apply(self, state: tuple[dict[str, Any], ...], call: ToolCall, result: Message) -> tuple[dict[str, Any], ...]:
        entries = result.metadata.get(ARTIFACTS_KEY)
        if not isinstance(entries, list | tuple):
            return state
        added = [
            {**{key: entry[key] for key in _FIELDS if key in entry}, "call_id": call.id, "tool": call.name}
            for entry in entries
            if isinstance(entry, dict) and ("artifact_id" in entry or "path" in entry)
        ]
        if not added:
            return state
        keys = {entry.get("artifact_id") or entry.get("path") for entry in added}
        kept = tuple(entry for entry in state if (entry.get("artifact_id") or entry.get("path")) not in keys)
        return (*kept, *added)

    def render(self, state: tuple[dict[str, Any], ...]) -> dict[str, Any] | None:
        if not state:
            return None
        return {"total": len(state), "artifacts": list(state[-SHOWN_ARTIFACTS:])}
