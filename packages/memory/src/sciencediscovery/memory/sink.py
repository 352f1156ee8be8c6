"""The observation sink: run events and tool results that become memory observations.

* a run's final answer and its outcome, on the entity ``conversation:<context_id>``;
* each entry of a successful result's ``metadata["memory"]`` (``[{"entity", "text", "kind"?}]``),
  the contract for tools that want to be remembered;
* each file announced in a successful result's ``metadata["artifacts"]``, on ``artifact:<name>``.

Tool results count only from trusted tools with trusted output: memory is later shown to models as
trusted data, so untrusted (remote) output never enters it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sciencediscovery.runtime_core import TRUST_KEY, Message, ModelOutput, RunEvent, RunFinished, ToolResultStatus
from sciencediscovery.tools.definitions import ToolDefinition, ToolInvocation, Trust

from .errors import InvalidMemoryInputError
from .graph import MemoryClient, Source

MEMORY_KEY = "memory"
"""Tool-result metadata key: observations a tool asks memory to keep."""
ARTIFACTS_KEY = "artifacts"
FINAL_ANSWER_CHARS = 600
"""How much of a run's final answer is remembered."""


def conversation_entity(context_id: str) -> str:
    return f"conversation:{context_id}"


class ObservationSink:
    """A :class:`RunEventSink` and :class:`ToolObserver` writing observations into a :class:`MemoryClient`."""

    def __init__(self, client: MemoryClient, *, skip_tools: frozenset[str] = frozenset()) -> None:
        self.client = client
        self.skip_tools = skip_tools

    def emit(self, event: RunEvent) -> None:
        source = Source(run_id=event.run_id, context_id=event.context_id, event=event.kind)
        entity = conversation_entity(event.context_id)
        if isinstance(event, ModelOutput) and not event.message.tool_calls and event.message.content.strip():
            answer = " ".join(event.message.content.split())[:FINAL_ANSWER_CHARS]
            self.client.add_observation(entity, f"Final answer: {answer}", source, kind="conversation")
        elif isinstance(event, RunFinished):
            text = f"Run {event.run_id} ended {event.status} after {event.turns} turns."
            self.client.add_observation(entity, text, source, kind="conversation")

    async def after(self, invocation: ToolInvocation, tool: ToolDefinition, result: Message) -> None:
        if result.status is not ToolResultStatus.OK or tool.name in self.skip_tools or not _trusted(tool, result):
            return
        context = invocation.context
        source = Source(context.run_id, context.context_id, invocation.call.id, tool.name)
        for entry in _entries(result.metadata, MEMORY_KEY):
            self._keep(entry.get("entity"), entry.get("text"), source, str(entry.get("kind", "")))
        for entry in _entries(result.metadata, ARTIFACTS_KEY):
            name = entry.get("name") or entry.get("path") or entry.get("artifact_id")
            if not isinstance(name, str) or not name:
                continue
            media = f" ({entry['media_type']})" if isinstance(entry.get("media_type"), str) else ""
            text = f"Produced by {tool.name} (call {invocation.call.id}) in run {context.run_id}{media}."
            self._keep(f"artifact:{name}", text, source, "artifact")

    def _keep(self, entity: Any, text: Any, source: Source, kind: str) -> None:
        """Record one tool-provided observation; malformed entries are skipped (the result is unaffected)."""
        try:
            self.client.add_observation(entity, text, source, kind=kind)
        except InvalidMemoryInputError:
            return


def _trusted(tool: ToolDefinition, result: Message) -> bool:
    """Untrusted (remote) output never enters memory, which is later shown to models as trusted data."""
    return tool.trust is Trust.TRUSTED and result.metadata.get(TRUST_KEY, Trust.TRUSTED.value) == Trust.TRUSTED.value


def _entries(metadata: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    entries = metadata.get(key)
    if not isinstance(entries, list | tuple):
        return []
    return [entry for entry in entries if isinstance(entry, Mapping)]
