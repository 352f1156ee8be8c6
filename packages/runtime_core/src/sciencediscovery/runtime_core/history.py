"""The canonical history vocabulary shared by every package.

Values here are immutable. Mapping-valued fields hold plain dicts for cheap
serialization; treat them as read-only.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .errors import HistoryError

OUTPUT_REF_KEY = "output_ref"
"""Message metadata key: the stored-output reference of a large tool result (readable with ``read_tool_output``)."""
TRUST_KEY = "trust"
"""Message metadata key: how far a tool result's content is trusted (``trusted`` or ``untrusted``)."""


class Role(str, enum.Enum):
    """Who authored a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class ToolResultStatus(str, enum.Enum):
    """How a tool call ended."""

    OK = "ok"
    ERROR = "error"
    CANCELLED = "cancelled"


def _non_empty(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value:
        raise HistoryError(f"{type(instance).__name__}.{attribute.name} must be a non-empty string, got {value!r}")


@attrs.frozen
class ToolCall:
    """One tool call requested by the model in an assistant message.

    ``argument_error`` is set by a model client when the model produced
    arguments that could not be parsed; the dispatcher answers such a call
    with an error result the model can read.
    """

    id: str = attrs.field(validator=_non_empty)
    name: str = attrs.field(validator=_non_empty)
    arguments: Mapping[str, Any] = attrs.field(factory=dict)
    argument_error: str | None = None


def _call_tuple(calls: Iterable[ToolCall]) -> tuple[ToolCall, ...]:
    return tuple(calls)


def message_tuple(messages: Iterable[Message]) -> tuple[Message, ...]:
    """Converter for message-sequence fields."""
    return tuple(messages)


def spec_tuple(specs: Iterable[ToolSpec]) -> tuple[ToolSpec, ...]:
    """Converter for tool-spec-sequence fields."""
    return tuple(specs)


@attrs.frozen
class ToolSpec:
    """A tool as declared to the model: name, description and JSON Schema."""

    name: str = attrs.field(validator=_non_empty)
    description: str = ""
    parameters: Mapping[str, Any] = attrs.field(factory=lambda: {"type": "object", "properties": {}})


@attrs.frozen
class Message:
    """One entry of canonical history.

    Build messages with the ``system``, ``user``, ``assistant`` and
    ``tool_result`` constructors, which enforce the role's shape.
    """

    role: Role = attrs.field(converter=Role)
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=_call_tuple)
    tool_call_id: str | None = None
    name: str | None = None
    status: ToolResultStatus | None = None
    error_kind: str | None = None
    metadata: Mapping[str, Any] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if self.tool_calls and self.role is not Role.ASSISTANT:
            raise HistoryError(f"only assistant messages may carry tool calls, not {self.role.value}")
        if self.role is Role.TOOL:
            if not self.tool_call_id:
                raise HistoryError("a tool result needs the tool_call_id it answers")
            if self.status is None:
                raise HistoryError(f"tool result for {self.tool_call_id!r} needs a status")
        elif self.tool_call_id is not None or self.status is not None:
            raise HistoryError(f"a {self.role.value} message cannot carry tool_call_id or status")

    @classmethod
    def system(cls, content: str, **metadata: Any) -> Message:
        return cls(Role.SYSTEM, content, metadata=metadata)

    @classmethod
    def user(cls, content: str, **metadata: Any) -> Message:
        return cls(Role.USER, content, metadata=metadata)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: Iterable[ToolCall] = (), **metadata: Any) -> Message:
        return cls(Role.ASSISTANT, content, tool_calls=tuple(tool_calls), metadata=metadata)

    @classmethod
    def tool_result(
        cls,
        call: ToolCall,
        content: str,
        *,
        status: ToolResultStatus = ToolResultStatus.OK,
        error_kind: str | None = None,
        **metadata: Any,
    ) -> Message:
        return cls(
            Role.TOOL,
            content,
            tool_call_id=call.id,
            name=call.name,
            status=status,
            error_kind=error_kind,
            metadata=metadata,
        )

    @property
    def is_tool_result(self) -> bool:
        return self.role is Role.TOOL


def open_tool_calls(history: tuple[Message, ...] | list[Message]) -> list[ToolCall]:
    """Return the assistant tool calls that have no result yet, in declared order."""
    answered = {m.tool_call_id for m in history if m.role is Role.TOOL}
    return [call for m in history if m.role is Role.ASSISTANT for call in m.tool_calls if call.id not in answered]


def check_pairing(history: tuple[Message, ...] | list[Message], *, allow_open: bool = False) -> None:
    """Raise :class:`HistoryError` unless every tool result answers an earlier call exactly once.

    Results must directly follow their assistant message (other results of the
    same step may come between). With ``allow_open`` the final step may still
    have calls without results.
    """
    pending: dict[str, int] = {}
    seen_calls: set[str] = set()
    for index, message in enumerate(history):
        if message.role is Role.TOOL:
            call_id = message.tool_call_id
            if call_id not in pending:
                raise HistoryError(f"history[{index}]: tool result {call_id!r} answers no open tool call")
            del pending[call_id]
            continue
        if pending:
            raise HistoryError(f"history[{index}]: tool calls {sorted(pending)} have no result before the next message")
        for call in message.tool_calls:
            if call.id in seen_calls:
                raise HistoryError(f"history[{index}]: tool call id {call.id!r} is used twice")
            seen_calls.add(call.id)
            pending[call.id] = index
    if pending and not allow_open:
        raise HistoryError(f"tool calls {sorted(pending)} have no result")
