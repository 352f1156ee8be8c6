"""The ``anthropic`` provider: the Messages API through the official ``anthropic`` SDK.

``ANTHROPIC_API_KEY`` is required; ``ANTHROPIC_BASE_URL`` points at another
server speaking the Messages API. ``max_tokens`` is the model's output reserve
from :func:`~sciencediscovery.model.facts.resolve_model_facts`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from types import ModuleType
from typing import Any

from sciencediscovery.runtime_core import ConfigurationError, Message, ModelInput, Role, ToolResultStatus

from .errors import MissingExtraError
from .facts import resolve_model_facts
from .provider import ProviderContext, ProviderDefinition
from .sdk import translate_sdk_error
from .stream import Finish, StreamPart, TextDelta, ToolCallDelta, UsageUpdate

NAME = "anthropic"
KEY_VARIABLE = "ANTHROPIC_API_KEY"
BASE_URL_VARIABLE = "ANTHROPIC_BASE_URL"

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
"""Anthropic ``stop_reason`` to the normalized finish reason."""


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role is Role.TOOL:
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
                "is_error": message.status is not ToolResultStatus.OK,
            }
        ]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.arguments)}
        for call in message.tool_calls
    )
    return blocks


def messages_request(model: str, max_tokens: int, model_input: ModelInput) -> dict[str, Any]:
    """The streaming Messages request body.

    System messages join the system prompt; tool results travel in user turns;
    consecutive turns of one role are merged, as the API expects alternation.
    """
    system = [model_input.system_prompt] if model_input.system_prompt else []
    turns: list[dict[str, Any]] = []
    for message in model_input.messages:
        if message.role is Role.SYSTEM:
            system.append(message.content)
            continue
        role = "assistant" if message.role is Role.ASSISTANT else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    request: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": turns, "stream": True}
    if system:
        request["system"] = "\n\n".join(system)
    if model_input.tools:
        request["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
            for t in model_input.tools
        ]
    return request


def _usage(usage: Any) -> UsageUpdate:
    cached = getattr(usage, "cache_read_input_tokens", None) or 0
    created = getattr(usage, "cache_creation_input_tokens", None) or 0
    uncached = getattr(usage, "input_tokens", None)
    return UsageUpdate(
        input_tokens=None if uncached is None else uncached + cached + created,
        output_tokens=getattr(usage, "output_tokens", None),
        cached_tokens=cached if uncached is not None else None,
    )


def event_parts(event: Any) -> list[StreamPart]:
    """The stream parts of one Messages stream event.

    ``input_tokens`` counts every input token (uncached, cache reads and cache
    writes), matching the OpenAI convention; ``cached_tokens`` are the cache reads.
    """
    kind = event.type
    if kind == "message_start":
        return [_usage(event.message.usage)]
    if kind == "content_block_start":
        block = event.content_block
        if block.type == "tool_use":
            return [ToolCallDelta(index=event.index, id=block.id, name=block.name)]
        if block.type == "text" and block.text:
            return [TextDelta(block.text)]
        return []
    if kind == "content_block_delta":
        delta = event.delta
        if delta.type == "text_delta":
            return [TextDelta(delta.text)]
        if delta.type == "input_json_delta":
            return [ToolCallDelta(index=event.index, arguments=delta.partial_json)]
        return []
    if kind == "message_delta":
        parts: list[StreamPart] = [_usage(event.usage)]
        if event.delta.stop_reason:
            parts.append(Finish(FINISH_REASONS.get(event.delta.stop_reason, event.delta.stop_reason)))
        return parts
    return []


def _load_sdk() -> ModuleType:
    """The ``anthropic`` SDK, or :class:`MissingExtraError` naming the pip command when the extra is missing."""
    try:
        import anthropic
    except ImportError as error:
        raise MissingExtraError(NAME, "anthropic", "anthropic") from error
    return anthropic


class AnthropicMessagesProvider:
    """Streams the Messages API through ``anthropic.AsyncAnthropic`` (SDK retries off: the client retries)."""

    name = NAME

    def __init__(
        self, model: str, *, api_key: str, base_url: str | None, max_tokens: int, timeout_s: float, proxy: str | None
    ) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self._sdk = _load_sdk()
        http_client = self._sdk.DefaultAsyncHttpxClient(proxy=proxy) if proxy else None
        self._client = self._sdk.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0, http_client=http_client
        )

    async def stream(self, model_input: ModelInput) -> AsyncGenerator[StreamPart, None]:
        try:
            events = await self._client.messages.create(**messages_request(self.model, self.max_tokens, model_input))
            try:
                async for event in events:
                    for part in event_parts(event):
                        yield part
            finally:
                await events.close()
        except self._sdk.APIError as error:
            raise translate_sdk_error(self._sdk, NAME, error) from error


def create_anthropic_provider(context: ProviderContext) -> AnthropicMessagesProvider:
    """Factory for ``anthropic:<model>``."""
    api_key = context.variable(KEY_VARIABLE)
    if api_key is None:
        raise ConfigurationError(KEY_VARIABLE, f"is required for {context.spec}")
    facts = resolve_model_facts(context.spec, context.environ)
    return AnthropicMessagesProvider(
        context.spec.target,
        api_key=api_key,
        base_url=context.variable(BASE_URL_VARIABLE),
        max_tokens=facts.max_output_tokens,
        timeout_s=context.settings.timeout_s,
        proxy=context.settings.proxy,
    )


ANTHROPIC_PROVIDER = ProviderDefinition(
    name=NAME,
    create=create_anthropic_provider,
    description="Anthropic Messages API; ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL",
)
