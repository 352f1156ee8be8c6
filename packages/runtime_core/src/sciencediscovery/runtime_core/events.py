"""Neutral lifecycle events the kernel emits through :class:`RunEventSink`.

Events are data. Sinks project them to logs, SSE streams, stores or metrics.
Packages may define their own event classes by subclassing :class:`RunEvent`
with a distinct ``kind``.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from .history import Message, ToolCall, ToolResultStatus
from .model_io import Usage


@attrs.frozen(kw_only=True)
class RunEvent:
    """Base of every run event."""

    kind: ClassVar[str] = "event"
    run_id: str
    context_id: str


@attrs.frozen(kw_only=True)
class RunStarted(RunEvent):
    kind: ClassVar[str] = "run_started"
    max_turns: int


@attrs.frozen(kw_only=True)
class TurnStarted(RunEvent):
    kind: ClassVar[str] = "turn_started"
    turn: int


@attrs.frozen(kw_only=True)
class ModelOutput(RunEvent):
    kind: ClassVar[str] = "model_output"
    turn: int
    message: Message
    finish_reason: str
    usage: Usage


@attrs.frozen(kw_only=True)
class ToolStarted(RunEvent):
    kind: ClassVar[str] = "tool_started"
    turn: int
    call: ToolCall


@attrs.frozen(kw_only=True)
class ToolFinished(RunEvent):
    """A tool call finished executing (in completion order, not declared order)."""

    kind: ClassVar[str] = "tool_finished"
    turn: int
    call: ToolCall
    status: ToolResultStatus
    duration_s: float


@attrs.frozen(kw_only=True)
class ToolResultCommitted(RunEvent):
    """A tool result entered canonical history; emitted in the model's declared order."""

    kind: ClassVar[str] = "tool_result_committed"
    turn: int
    index: int
    call: ToolCall
    result: Message


@attrs.frozen(kw_only=True)
class StepCommitted(RunEvent):
    """One step (an assistant message and all of its results) was appended to history."""

    kind: ClassVar[str] = "step_committed"
    turn: int
    messages: tuple[Message, ...]


@attrs.frozen(kw_only=True)
class HistoryReplaced(RunEvent):
    """The assembler returned a compacted canonical history that replaces the old one."""

    kind: ClassVar[str] = "history_replaced"
    turn: int
    history: tuple[Message, ...]


@attrs.frozen(kw_only=True)
class OverflowRecovery(RunEvent):
    kind: ClassVar[str] = "overflow_recovery"
    turn: int
    attempt: int
    reason: str


@attrs.frozen(kw_only=True)
class ExternalWaitStarted(RunEvent):
    """The run waits on something outside the model, e.g. a human permission decision."""

    kind: ClassVar[str] = "external_wait_started"
    turn: int
    wait_id: str
    wait_kind: str
    detail: str


@attrs.frozen(kw_only=True)
class ExternalWaitFinished(RunEvent):
    kind: ClassVar[str] = "external_wait_finished"
    turn: int
    wait_id: str
    wait_kind: str
    duration_s: float


@attrs.frozen(kw_only=True)
class RunFinished(RunEvent):
    kind: ClassVar[str] = "run_finished"
    status: str
    reason: str
    turns: int
