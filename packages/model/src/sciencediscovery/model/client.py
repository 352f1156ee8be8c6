"""ProviderModelClient: the kernel's ModelClient port over a pluggable provider, with retries."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import ModelInput, ModelResponse, TurnContext, make_plugin_manager

from .errors import ProviderError
from .events import ModelRetry, ModelStreamDelta
from .provider import Provider
from .registry import ProviderRegistry
from .settings import ClientSettings
from .stream import StreamAccumulator, StreamPart, TextDelta, ToolCallDelta


class ProviderModelClient:
    """Implements ``ModelClient.complete`` by streaming one call from ``provider``.

    Text and tool-call deltas are forwarded to ``context.events`` as
    :class:`ModelStreamDelta` as they arrive. Retryable errors (rate limits, 5xx,
    408/409, connection errors, timeouts) are retried under ``settings.retry``,
    each retry announced as a :class:`ModelRetry`; other errors propagate at once.
    Cancelling the awaiting task closes the in-flight request.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        settings: ClientSettings | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.provider = provider
        self.settings = settings or ClientSettings()
        self._sleep = sleep
        self._rng = rng

    @classmethod
    def from_spec(
        cls,
        spec: str,
        *,
        plugin_manager: Any | None = None,
        environ: Mapping[str, str] | None = None,
        settings: ClientSettings | None = None,
    ) -> ProviderModelClient:
        """Build a client for ``spec`` from the providers registered with ``plugin_manager``.

        Without a plugin manager the installed ``sciencediscovery`` entry points are loaded.
        """
        manager = plugin_manager if plugin_manager is not None else make_plugin_manager(environ=environ)
        registry = ProviderRegistry.from_plugin_manager(manager)
        settings = settings or ClientSettings.from_environ(environ)
        return cls(registry.create(spec, settings=settings, environ=environ), settings=settings)

    async def complete(self, model_input: ModelInput, context: TurnContext) -> ModelResponse:
        policy = self.settings.retry
        attempt = 1
        while True:
            try:
                return await self._attempt(model_input, context, attempt)
            except ProviderError as error:
                if not error.retryable or attempt >= policy.max_attempts:
                    if attempt > 1:
                        error.add_note(f"gave up after {attempt} attempts")
                    raise
                delay = policy.delay(attempt, error.retry_after_s, self._rng())
                context.events.emit(
                    ModelRetry(
                        run_id=context.run_id,
                        context_id=context.context_id,
                        turn=context.turn,
                        attempt=attempt,
                        reason=error.reason,
                        message=error.provider_message,
                        delay_s=delay,
                        status=error.status,
                    )
                )
                await self._sleep(delay)
                attempt += 1

    async def _attempt(self, model_input: ModelInput, context: TurnContext, attempt: int) -> ModelResponse:
        accumulator = StreamAccumulator(self.provider.name)
        async with contextlib.aclosing(self.provider.stream(model_input)) as parts:
            async for part in parts:
                accumulator.add(part)
                event = _delta_event(part, context, attempt)
                if event is not None:
                    context.events.emit(event)
        return accumulator.response(self.provider.model)


def _delta_event(part: StreamPart, context: TurnContext, attempt: int) -> ModelStreamDelta | None:
    if isinstance(part, TextDelta) and part.text:
        fields: dict[str, Any] = {"text": part.text}
    elif isinstance(part, ToolCallDelta):
        fields = {
            "tool_call_index": part.index,
            "tool_call_id": part.id,
            "tool_name": part.name,
            "arguments_delta": part.arguments,
        }
    else:
        return None
    return ModelStreamDelta(
        run_id=context.run_id, context_id=context.context_id, turn=context.turn, attempt=attempt, **fields
    )
