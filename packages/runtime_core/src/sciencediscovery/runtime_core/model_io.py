"""What goes into and comes out of one model turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .errors import HistoryError
from .history import Message, Role, ToolSpec, message_tuple, spec_tuple


@attrs.frozen
class ModelInput:
    """The exact input of one model call.

    The kernel hands it from the assembler to the model client without looking
    inside; ``metadata`` is free for assembler/model-client agreements.
    """

    system_prompt: str
    messages: tuple[Message, ...] = attrs.field(default=(), converter=message_tuple)
    tools: tuple[ToolSpec, ...] = attrs.field(default=(), converter=spec_tuple)
    metadata: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Usage:
    """Token usage reported by a provider for one call."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@attrs.frozen
class ModelResponse:
    """One normalized model turn: an assistant message and its accounting."""

    message: Message
    finish_reason: str = "stop"
    usage: Usage = attrs.field(factory=Usage)
    model: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.message.role is not Role.ASSISTANT:
            raise HistoryError(f"a model response must be an assistant message, got {self.message.role.value}")
