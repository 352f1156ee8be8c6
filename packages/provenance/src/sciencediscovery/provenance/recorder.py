"""Recording provenance from kernel events, tool invocations and model calls."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.runtime_core import (
    Message,
    ModelClient,
    ModelInput,
    ModelOutput,
    ModelResponse,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolCall,
    ToolFinished,
    ToolResultCommitted,
    ToolResultStatus,
    TurnContext,
)
from sciencediscovery.tools.definitions import ToolDefinition, ToolInvocation

from .hashing import hash_arguments, hash_message, hash_model_input
from .store import ProvenanceStore

ARTIFACTS_KEY = "artifacts"
"""Tool-result metadata key listing produced files: ``[{"path" or "sha256", "name", "media_type", ...}]``."""
PERMISSION_EPOCH_KEY = "permission_epoch"
"""Tool-result metadata key naming the permission epoch the invocation was authorized under."""
ENVIRONMENT_REVISION_KEY = "environment_revision"
"""Tool-result metadata key naming the reproducible environment a code execution ran in."""


class ProvenanceRecorder:
    """A :class:`RunEventSink` and :class:`ToolObserver` writing to one :class:`ProvenanceStore`.

    From events it records runs, model-turn manifests (usage, output hash),
    tool timings and the committed result of every call; as a tool observer it
    adds each tool's action, source, permission epoch and the files it produced.
    """

    def __init__(self, store: ProvenanceStore) -> None:
        self.store = store

    def emit(self, event: RunEvent) -> None:
        ids = {"run_id": event.run_id, "context_id": event.context_id}
        if isinstance(event, RunStarted):
            self.store.run_started(**ids)
        elif isinstance(event, RunFinished):
            self.store.run_finished(**ids, status=event.status, turns=event.turns)
        elif isinstance(event, ModelOutput):
            usage = event.usage
            self.store.model_output_seen(
                **ids,
                turn=event.turn,
                output_hash=hash_message(event.message),
                finish_reason=event.finish_reason,
                usage=(usage.input_tokens, usage.output_tokens, usage.cached_tokens),
                tool_calls=len(event.message.tool_calls),
            )
        elif isinstance(event, ToolFinished):
            self.store.tool_timed(
                **ids,
                call_id=event.call.id,
                turn=event.turn,
                tool=event.call.name,
                argument_hash=hash_arguments(event.call.arguments),
                duration_s=event.duration_s,
            )
        elif isinstance(event, ToolResultCommitted):
            self._commit(event.run_id, event.context_id, event.turn, event.call, event.result)

    def _commit(self, run_id: str, context_id: str, turn: int, call: ToolCall, result: Message) -> None:
        """The call's result: from the observer first, then authoritatively from ``ToolResultCommitted``."""
        self.store.tool_committed(
            run_id=run_id,
            context_id=context_id,
            call_id=call.id,
            turn=turn,
            tool=call.name,
            argument_hash=hash_arguments(call.arguments),
            result_hash=hash_message(result),
            status=(result.status or ToolResultStatus.ERROR).value,
            error_kind=result.error_kind,
        )

    async def after(self, invocation: ToolInvocation, tool: ToolDefinition, result: Message) -> None:
        context = invocation.context
        epoch = result.metadata.get(PERMISSION_EPOCH_KEY)
        revision = result.metadata.get(ENVIRONMENT_REVISION_KEY)
        self.store.tool_observed(
            run_id=context.run_id,
            context_id=context.context_id,
            call_id=invocation.call.id,
            turn=context.turn,
            tool=tool.name,
            argument_hash=hash_arguments(invocation.call.arguments),
            action=tool.action.value,
            source=tool.source,
            permission_epoch=None if epoch is None else str(epoch),
            environment_revision=None if revision is None else str(revision),
        )
        self._commit(context.run_id, context.context_id, context.turn, invocation.call, result)
        if result.status is not ToolResultStatus.OK:
            return
        for entry in produced_files(result.metadata):
            sha256 = entry.get("sha256") or await asyncio.to_thread(_file_sha256, Path(entry["path"]))
            if sha256 is None:
                continue
            self.store.derivation(
                run_id=context.run_id,
                call_id=invocation.call.id,
                sha256=sha256,
                name=str(entry.get("name") or Path(str(entry.get("path", sha256))).name),
                media_type=entry.get("media_type"),
            )


def produced_files(metadata: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The well-formed entries of ``metadata["artifacts"]`` (each has a ``path`` or a ``sha256``)."""
    entries = metadata.get(ARTIFACTS_KEY)
    if not isinstance(entries, list | tuple):
        return []
    return [
        e
        for e in entries
        if isinstance(e, Mapping) and (isinstance(e.get("sha256"), str) or isinstance(e.get("path"), str))
    ]


def _file_sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


class ManifestModelClient:
    """Wraps a :class:`ModelClient` to record the hash of each turn's exact input and the model id."""

    def __init__(self, inner: ModelClient, store: ProvenanceStore) -> None:
        self.inner = inner
        self.store = store

    async def complete(self, model_input: ModelInput, context: TurnContext) -> ModelResponse:
        response = await self.inner.complete(model_input, context)
        self.store.model_input_seen(
            context.run_id, context.context_id, context.turn, hash_model_input(model_input), response.model
        )
        return response
