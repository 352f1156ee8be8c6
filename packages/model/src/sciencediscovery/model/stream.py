"""Provider-neutral stream parts and their assembly into one normalized model turn."""

from __future__ import annotations

import json
import uuid
from typing import Any

import attrs

from sciencediscovery.runtime_core import Message, ModelResponse, ToolCall, Usage

from .errors import ModelResponseError


@attrs.frozen
class TextDelta:
    """The next piece of the assistant's text."""

    text: str


@attrs.frozen
class ToolCallDelta:
    """A fragment of the tool call at ``index``; ``id`` and ``name`` usually arrive with the first fragment."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@attrs.frozen
class UsageUpdate:
    """Token counts reported so far; fields left ``None`` keep their earlier value."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None


@attrs.frozen
class Finish:
    """Why the provider stopped: ``stop``, ``tool_calls``, ``length`` or ``content_filter``."""

    reason: str


StreamPart = TextDelta | ToolCallDelta | UsageUpdate | Finish


def parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """Parse a tool call's argument JSON into ``(arguments, error)``; malformed input gives ``({}, reason)``."""
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        excerpt = text if len(text) <= 200 else text[:200] + "..."
        return {}, f"arguments are not valid JSON ({error.msg} at character {error.pos}): {excerpt!r}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


@attrs.define
class _PendingCall:
    id: str | None = None
    name: str | None = None
    fragments: list[str] = attrs.Factory(list)


class StreamAccumulator:
    """Collects stream parts and builds the :class:`ModelResponse` they add up to."""

    def __init__(self, provider: str) -> None:
        self._provider = provider
        self._text: list[str] = []
        self._calls: dict[int, _PendingCall] = {}
        self._usage = Usage()
        self._finish: str | None = None

    def add(self, part: StreamPart) -> None:
        if isinstance(part, TextDelta):
            self._text.append(part.text)
        elif isinstance(part, ToolCallDelta):
            call = self._calls.setdefault(part.index, _PendingCall())
            call.id = call.id or part.id or None
            call.name = call.name or part.name or None
            call.fragments.append(part.arguments)
        elif isinstance(part, UsageUpdate):
            self._usage = Usage(
                input_tokens=self._usage.input_tokens if part.input_tokens is None else part.input_tokens,
                output_tokens=self._usage.output_tokens if part.output_tokens is None else part.output_tokens,
                cached_tokens=self._usage.cached_tokens if part.cached_tokens is None else part.cached_tokens,
            )
        else:
            self._finish = part.reason

    def response(self, model: str | None) -> ModelResponse:
        calls = []
        for index in sorted(self._calls):
            pending = self._calls[index]
            if not pending.name:
                raise ModelResponseError(f"tool call at stream index {index} has no name", provider=self._provider)
            arguments, error = parse_arguments("".join(pending.fragments))
            call_id = pending.id or f"call_{uuid.uuid4().hex[:24]}"
            calls.append(ToolCall(id=call_id, name=pending.name, arguments=arguments, argument_error=error))
        finish = self._finish or ("tool_calls" if calls else "stop")
        message = Message.assistant("".join(self._text), calls)
        return ModelResponse(message=message, finish_reason=finish, usage=self._usage, model=model)
