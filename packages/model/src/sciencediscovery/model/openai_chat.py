"""The ``openai`` provider: the Chat Completions protocol through the official ``openai`` SDK.

Works with OpenAI and with any compatible server (vLLM, Ollama, llama.cpp,
LiteLLM): set ``OPENAI_BASE_URL``. ``OPENAI_API_KEY`` is required unless a base
URL is set (local servers usually need no key).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from types import ModuleType
from typing import Any

from sciencediscovery.runtime_core import ConfigurationError, Message, ModelInput, Role

from .errors import MissingExtraError
from .provider import ProviderContext, ProviderDefinition
from .sdk import translate_sdk_error
from .stream import Finish, StreamPart, TextDelta, ToolCallDelta, UsageUpdate

NAME = "openai"
KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
_NO_KEY = "no-key-needed"


def chat_messages(model_input: ModelInput) -> list[dict[str, Any]]:
    """The Chat Completions ``messages`` for a normalized input (system prompt first)."""
    wire: list[dict[str, Any]] = []
    if model_input.system_prompt:
        wire.append({"role": "system", "content": model_input.system_prompt})
    wire.extend(_message(message) for message in model_input.messages)
    return wire


def _message(message: Message) -> dict[str, Any]:
    if message.role is Role.TOOL:
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role is Role.ASSISTANT and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments), ensure_ascii=False)},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role.value, "content": message.content}


def chat_request(model: str, model_input: ModelInput) -> dict[str, Any]:
    """The streaming Chat Completions request body."""
    request: dict[str, Any] = {
        "model": model,
        "messages": chat_messages(model_input),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if model_input.tools:
        request["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters)},
            }
            for t in model_input.tools
        ]
    return request


def chunk_parts(chunk: Any) -> list[StreamPart]:
    """The stream parts of one ``ChatCompletionChunk`` (first choice only; usage from the final chunk)."""
    parts: list[StreamPart] = []
    for choice in chunk.choices or ():
        if choice.index != 0:
            continue
        delta = choice.delta
        if delta is not None and delta.content:
            parts.append(TextDelta(delta.content))
        for position, call in enumerate((delta.tool_calls if delta is not None else None) or ()):
            function = call.function
            parts.append(
                ToolCallDelta(
                    index=call.index if call.index is not None else position,
                    id=call.id,
                    name=function.name if function else None,
                    arguments=(function.arguments or "") if function else "",
                )
            )
        if choice.finish_reason:
            parts.append(Finish(choice.finish_reason))
    usage = chunk.usage
    if usage is not None:
        details = usage.prompt_tokens_details
        parts.append(
            UsageUpdate(
                input_tokens=usage.prompt_tokens,
                output_tokens=usage.completion_tokens,
                cached_tokens=(details.cached_tokens or 0) if details is not None else 0,
            )
        )
    return parts


def _load_sdk() -> ModuleType:
    """The ``openai`` SDK, or :class:`MissingExtraError` naming the pip command when the extra is missing."""
    try:
        import openai
    except ImportError as error:
        raise MissingExtraError(NAME, "openai", "openai") from error
    return openai


class OpenAIChatProvider:
    """Streams Chat Completions through ``openai.AsyncOpenAI`` (SDK retries off: the client retries)."""

    name = NAME

    def __init__(self, model: str, *, api_key: str, base_url: str | None, timeout_s: float, proxy: str | None) -> None:
        self.model = model
        self._sdk = _load_sdk()
        http_client = self._sdk.DefaultAsyncHttpxClient(proxy=proxy) if proxy else None
        self._client = self._sdk.AsyncOpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0, http_client=http_client
        )

    async def stream(self, model_input: ModelInput) -> AsyncGenerator[StreamPart, None]:
        try:
            chunks = await self._client.chat.completions.create(**chat_request(self.model, model_input))
            try:
                async for chunk in chunks:
                    for part in chunk_parts(chunk):
                        yield part
            finally:
                await chunks.close()
        except self._sdk.APIError as error:
            raise translate_sdk_error(self._sdk, NAME, error) from error


def create_openai_provider(context: ProviderContext) -> OpenAIChatProvider:
    """Factory for ``openai:<model>``."""
    base_url = context.variable(BASE_URL_VARIABLE)
    api_key = context.variable(KEY_VARIABLE)
    if api_key is None and base_url is None:
        raise ConfigurationError(
            KEY_VARIABLE,
            f"is required for {context.spec} (or set {BASE_URL_VARIABLE} for a compatible server without keys)",
        )
    return OpenAIChatProvider(
        context.spec.target,
        api_key=api_key or _NO_KEY,
        base_url=base_url,
        timeout_s=context.settings.timeout_s,
        proxy=context.settings.proxy,
    )


OPENAI_PROVIDER = ProviderDefinition(
    name=NAME,
    create=create_openai_provider,
    description="Chat Completions protocol (OpenAI and compatible servers); OPENAI_API_KEY, OPENAI_BASE_URL",
)
