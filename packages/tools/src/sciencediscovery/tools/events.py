"""Run events of the tools package: the full detail behind short model-facing tool errors."""

from __future__ import annotations

from typing import ClassVar

import attrs

from sciencediscovery.runtime_core import RunEvent


@attrs.frozen(kw_only=True)
class ToolCallFailed(RunEvent):
    """A call ended with a normalized error; ``message`` is what the model saw, ``detail`` everything else."""

    kind: ClassVar[str] = "tool_call_failed"
    turn: int
    call_id: str
    tool: str
    error_kind: str
    message: str
    detail: str


@attrs.frozen(kw_only=True)
class ToolOutputProcessed(RunEvent):
    """What the dispatcher did to a successful output: sanitization changes, inline cap, storage."""

    kind: ClassVar[str] = "tool_output_processed"
    turn: int
    call_id: str
    tool: str
    trust: str
    original_chars: int
    inline_chars: int
    changes: tuple[tuple[str, int], ...] = ()
    output_ref: str | None = None


@attrs.frozen(kw_only=True)
class ToolObserverFailed(RunEvent):
    """An observer raised after a call finished; the call's result is unaffected."""

    kind: ClassVar[str] = "tool_observer_failed"
    turn: int
    call_id: str
    tool: str
    observer: str
    detail: str
