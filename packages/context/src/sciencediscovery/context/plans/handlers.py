"""Selector and compressor handlers, what they receive, and the guarded model access they get."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from sciencediscovery.runtime_core import ModelClient, ModelInput, ModelResponse, TurnContext

from .errors import HandlerCallLimitError, PlanDefinitionError, SelectorError
from .fragments import ContextFragment
from .quota import ModelCallQuota
from .request import Measurement
from .signals import CancelSignal

__all__ = [
    "CompressionJob",
    "Compressor",
    "HandlerContext",
    "SelectionJob",
    "Selector",
    "StepCandidate",
    "handler_max_calls",
    "index_handlers",
]


@attrs.frozen
class CompressionJob:
    """A compress step's input: the fragment (only the old segment when preserving) and its char target."""

    step_id: str
    fragment: ContextFragment
    target_chars: int
    preserved_chars: int = 0


@attrs.frozen
class StepCandidate:
    """An affordable step a model selector may choose; ``trim_loss_ratio`` is set for trims."""

    step_id: str
    kind: str
    fragment_id: str
    max_calls: int
    trim_loss_ratio: float | None = None


@attrs.frozen
class SelectionJob:
    """What a model selector sees: the candidates and the current measurement."""

    candidates: tuple[StepCandidate, ...]
    measurement: Measurement


class HandlerContext:
    """A handler's guarded access to the model: at most ``max_calls`` calls, charged to the run quota.

    Calls run under the processing ``signal`` (they are cancelled with it). Selector
    contexts refuse requests that declare tools.
    """

    def __init__(
        self,
        handler_id: str,
        max_calls: int,
        *,
        client: ModelClient,
        turn: TurnContext,
        quota: ModelCallQuota,
        signal: CancelSignal,
        allow_tools: bool = True,
    ) -> None:
        self.handler_id = handler_id
        self.max_calls = max_calls
        self.signal = signal
        self.calls = 0
        self._client = client
        self._turn = turn
        self._quota = quota
        self._allow_tools = allow_tools

    async def call_model(self, model_input: ModelInput) -> ModelResponse:
        """One model call; the call is deducted before it is made and not refunded if it fails."""
        self.signal.check(self.handler_id)
        if not isinstance(model_input, ModelInput):
            raise PlanDefinitionError("model_input", f"must be a ModelInput, got {type(model_input).__name__}")
        if model_input.tools and not self._allow_tools:
            raise SelectorError(self.handler_id, "cannot add tools to its model request")
        if self.calls >= self.max_calls:
            raise HandlerCallLimitError(self.handler_id, self.max_calls)
        self._quota.charge(1)
        self.calls += 1
        return await self.signal.run(self._client.complete(model_input, self._turn), self.handler_id)


@runtime_checkable
class Compressor(Protocol):
    """Returns a shorter version of the job's fragment fields (same keys; history keeps its grouping).

    ``max_calls`` (default 1 when absent; 0 for purely local handlers) bounds its model calls.
    """

    id: str

    async def compress(self, job: CompressionJob, context: HandlerContext) -> Mapping[str, Any]: ...


@runtime_checkable
class Selector(Protocol):
    """Returns the id of one offered step; it cannot add tools, handlers, permissions or budget."""

    id: str

    async def select(self, job: SelectionJob, context: HandlerContext) -> str: ...


def handler_max_calls(handler: object) -> int:
    """A handler's declared ``max_calls`` (1 when absent)."""
    value = getattr(handler, "max_calls", 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PlanDefinitionError(f"{getattr(handler, 'id', '?')}.max_calls", f"must be >= 0, got {value!r}")
    return value


def index_handlers(handlers: Iterable[Any], method: str, field: str) -> Mapping[str, Any]:
    """Snapshot handlers by id; duplicate ids or a missing ``method`` raise :class:`PlanDefinitionError`."""
    indexed: dict[str, Any] = {}
    for handler in handlers:
        handler_id = getattr(handler, "id", None)
        if not isinstance(handler_id, str) or not handler_id or not callable(getattr(handler, method, None)):
            raise PlanDefinitionError(field, f"{handler!r} needs a string id and an async {method}() method")
        if handler_id in indexed:
            raise PlanDefinitionError(field, f"handler id {handler_id!r} is registered twice")
        handler_max_calls(handler)
        indexed[handler_id] = handler
    return indexed
