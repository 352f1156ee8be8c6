"""The real provider request: assembling a plan into ``ModelInput``, measuring it and checking hard limits.

The request is runtime_core's :class:`~sciencediscovery.runtime_core.ModelInput`, the input of the
``ModelClient`` port: ``system_prompt`` holds instructions, ``messages`` the body, ``tools`` the
declarations and ``metadata["response_schema"]`` an optional output JSON Schema. The snapshot that is
measured is the object that is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from sciencediscovery.runtime_core import Message, ModelInput, ToolSpec
from sciencediscovery.runtime_core.serialization import to_json

from ..grouping import messages_from_entries
from .errors import PlanDefinitionError, PlanOverLimitError
from .fragments import INSTRUCTION_ROLES, ContextFragment, ContextPlan, FragmentRole, json_chars
from .validators import count, non_empty

__all__ = [
    "ADDITIONAL_MESSAGES",
    "RESPONSE_SCHEMA_KEY",
    "ContextRequest",
    "DirectInput",
    "Measurement",
    "TokenBudget",
    "TokenCounter",
    "assemble",
    "check_limits",
    "measure",
]

RESPONSE_SCHEMA_KEY = "response_schema"
"""``ModelInput.metadata`` key of the output JSON Schema."""
ADDITIONAL_MESSAGES = "additional_messages"
"""The name under which a plan's additional (image) messages are reported in limit errors."""

DirectInput = str | Sequence[Message] | ModelInput | ContextPlan
"""What a direct call accepts: plain text, messages, an already built input, or a plan."""


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of the real neutral request (instructions, schema, tools, messages and images)."""

    def count(self, model_input: ModelInput) -> int: ...


@attrs.frozen
class TokenBudget:
    """A token limit: the request must fit ``context_tokens - output_reservation - safety_margin``."""

    context_tokens: int = attrs.field(validator=count)
    output_reservation: int = attrs.field(default=0, validator=count)
    safety_margin: int = attrs.field(default=0, validator=count)

    @property
    def input_limit(self) -> int:
        return max(self.context_tokens - self.output_reservation - self.safety_margin, 0)


@attrs.frozen
class ContextRequest:
    """One model request's identity, hard limits, declarations and token accounting."""

    request_id: str = attrs.field(validator=non_empty)
    max_input_chars: int = attrs.field(validator=count)
    max_schema_chars: int = attrs.field(validator=count)
    tools: tuple[ToolSpec, ...] = attrs.field(default=(), converter=tuple)
    response_schema: Mapping[str, Any] | None = None
    token_budget: TokenBudget | None = None
    counter: TokenCounter | None = attrs.field(default=None, eq=False)

    def __attrs_post_init__(self) -> None:
        if self.token_budget is not None and self.counter is None:
            raise PlanDefinitionError("counter", "a token_budget needs a TokenCounter")


def _field_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _render(fragment: ContextFragment) -> tuple[str | None, tuple[Message, ...]]:
    """A fragment's system-prompt text or its body messages.

    History fragments render list fields as history entries, preceded by one data message
    holding their other fields; data fragments render as one user data message.
    """
    if fragment.role in INSTRUCTION_ROLES:
        return "\n".join(_field_text(v) for v in fragment.fields.values()), ()
    meta = {"fragment_id": fragment.id, "trust": fragment.trust.value}
    if fragment.role is not FragmentRole.HISTORY:
        return None, (Message.user(json.dumps(dict(fragment.fields), ensure_ascii=False), **meta),)
    facts = {name: value for name, value in fragment.fields.items() if not isinstance(value, list)}
    messages = [Message.user(json.dumps(facts, ensure_ascii=False), **meta)] if facts else []
    for name, entries in fragment.fields.items():
        if isinstance(entries, list):
            found = messages_from_entries(entries, field=f"{fragment.id}.{name}")
            messages.extend(attrs.evolve(message, metadata=meta) for message in found)
    return None, tuple(messages)


def assemble(value: DirectInput, request: ContextRequest) -> ModelInput:
    """Build the real request for ``value``; a built ``ModelInput`` is returned unchanged."""
    if isinstance(value, ModelInput):
        return value
    metadata = {RESPONSE_SCHEMA_KEY: dict(request.response_schema)} if request.response_schema is not None else {}
    if isinstance(value, str):
        return ModelInput("", (Message.user(value),), request.tools, metadata)
    if isinstance(value, ContextPlan):
        sections: list[str] = []
        body: list[Message] = []
        for fragment in value.fragments:
            text, messages = _render(fragment)
            if text is not None:
                sections.append(text)
            body.extend(messages)
        return ModelInput("\n\n".join(sections), (*body, *value.additional_messages), request.tools, metadata)
    messages = tuple(value)
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise PlanDefinitionError(f"input[{index}]", f"must be a Message, got {type(message).__name__}")
    return ModelInput("", messages, request.tools, metadata)


@attrs.frozen
class Measurement:
    """Sizes of one request snapshot: body chars, instruction+declaration chars, tokens if counted."""

    body_chars: int
    schema_chars: int
    tokens: int | None = None


def _message_chars(message: Message) -> int:
    calls = [{"name": c.name, "arguments": dict(c.arguments)} for c in message.tool_calls]
    return len(message.content) + (json_chars(calls) if calls else 0)


def measure(model_input: ModelInput, request: ContextRequest) -> Measurement:
    """Measure the snapshot; a response schema already embedded in the instructions is counted once."""
    tools = json_chars(to_json(list(model_input.tools))) if model_input.tools else 0
    schema_chars = len(model_input.system_prompt) + tools
    schema = model_input.metadata.get(RESPONSE_SCHEMA_KEY)
    if schema is not None:
        schema_text = json.dumps(schema, ensure_ascii=False)
        compact = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
        if schema_text not in model_input.system_prompt and compact not in model_input.system_prompt:
            schema_chars += len(compact)
    tokens = request.counter.count(model_input) if request.counter is not None else None
    return Measurement(sum(_message_chars(m) for m in model_input.messages), schema_chars, tokens)


def check_limits(model_input: ModelInput, request: ContextRequest, plan: ContextPlan | None = None) -> Measurement:
    """Measure and raise :class:`PlanOverLimitError` on the first hard limit exceeded."""
    measured = measure(model_input, request)
    body_ids: tuple[str, ...] = ()
    schema_ids: tuple[str, ...] = ()
    if plan is not None:
        body_ids = tuple(f.id for f in plan.fragments if f.role not in INSTRUCTION_ROLES)
        body_ids += (ADDITIONAL_MESSAGES,) if plan.additional_messages else ()
        schema_ids = tuple(f.id for f in plan.fragments if f.role in INSTRUCTION_ROLES)
        for fragment in plan.fragments:
            if fragment.max_chars is not None and fragment.chars > fragment.max_chars:
                raise PlanOverLimitError(f"{fragment.id}.max_chars", fragment.max_chars, fragment.chars, (fragment.id,))
    if measured.body_chars > request.max_input_chars:
        raise PlanOverLimitError("max_input_chars", request.max_input_chars, measured.body_chars, body_ids)
    if measured.schema_chars > request.max_schema_chars:
        raise PlanOverLimitError("max_schema_chars", request.max_schema_chars, measured.schema_chars, schema_ids)
    if request.token_budget is not None and measured.tokens is not None:
        limit = request.token_budget.input_limit
        if measured.tokens > limit:
            raise PlanOverLimitError("token_budget", limit, measured.tokens, body_ids + schema_ids)
    return measured
