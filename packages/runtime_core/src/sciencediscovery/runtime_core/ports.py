"""The four ports the kernel depends on, and the values that cross them."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs

from .events import RunEvent
from .history import Message, ToolCall
from .model_io import ModelInput, ModelResponse
from .waits import ExternalWaits


@attrs.frozen
class AssemblyRequest:
    """What the kernel asks the assembler for before each model call.

    ``force_pressure`` is set for the single forced pass after a provider
    reported a context overflow; ``recovery_attempt`` counts such passes.
    """

    run_id: str
    context_id: str
    turn: int
    history: tuple[Message, ...]
    force_pressure: bool = False
    recovery_attempt: int = 0
    recovery_reason: str | None = None


@attrs.frozen
class AssembledContext:
    """The assembler's answer: authoritative history and the opaque model input."""

    history: tuple[Message, ...]
    model_input: ModelInput


@attrs.frozen
class TurnContext:
    """Run identity and services handed to the model client and tool dispatcher."""

    run_id: str
    context_id: str
    turn: int
    events: RunEventSink
    waits: ExternalWaits


@runtime_checkable
class ContextAssembler(Protocol):
    """Produces the authoritative history and the model input for one turn."""

    async def assemble(self, request: AssemblyRequest) -> AssembledContext: ...


@runtime_checkable
class ModelClient(Protocol):
    """Performs one normalized model turn.

    Raises :class:`~sciencediscovery.runtime_core.errors.ContextOverflowError`
    when the provider reports that the input exceeds its window.
    """

    async def complete(self, model_input: ModelInput, context: TurnContext) -> ModelResponse: ...


@runtime_checkable
class ToolDispatcher(Protocol):
    """Applies tool policy to one call and returns its canonical tool-result message."""

    async def dispatch(self, call: ToolCall, context: TurnContext) -> Message: ...


@runtime_checkable
class RunEventSink(Protocol):
    """Receives neutral lifecycle events. ``emit`` must not block."""

    def emit(self, event: RunEvent) -> None: ...


PORTS: dict[str, type] = {
    "context_assembler": ContextAssembler,
    "model_client": ModelClient,
    "tool_dispatcher": ToolDispatcher,
    "event_sink": RunEventSink,
}
"""Port name to protocol, in registration order."""
