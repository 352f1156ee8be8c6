"""RecordingModelClient: keeps the exact normalized input of every model call."""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs

from sciencediscovery.runtime_core import ModelClient, ModelInput, ModelResponse, TurnContext
from sciencediscovery.runtime_core.serialization import to_json


@attrs.frozen
class RecordedCall:
    """One model call as the wrapped client received it."""

    run_id: str
    context_id: str
    turn: int
    model_input: ModelInput


class RecordingModelClient:
    """Wraps a ModelClient and records each call's ``ModelInput`` before passing it on (failed calls included)."""

    def __init__(self, inner: ModelClient) -> None:
        self.inner = inner
        self.calls: list[RecordedCall] = []

    @property
    def inputs(self) -> list[ModelInput]:
        return [call.model_input for call in self.calls]

    async def complete(self, model_input: ModelInput, context: TurnContext) -> ModelResponse:
        self.calls.append(RecordedCall(context.run_id, context.context_id, context.turn, model_input))
        return await self.inner.complete(model_input, context)

    def write_json(self, path: str | os.PathLike[str]) -> Path:
        """Write every recorded call as a JSON list to ``path``, readable by the owner only (0600)."""
        target = Path(path)
        data = [to_json(call) for call in self.calls]
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.chmod(target, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2)
        return target
