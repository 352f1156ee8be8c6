"""Operational logging on structlog: configuration and an event sink that logs run lifecycle facts.

The sink logs identities, kinds, counts, statuses and durations, never message
or tool content (those are data for traces and stores, not log lines).
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

from sciencediscovery.runtime_core import (
    ExternalWaitFinished,
    ModelOutput,
    OverflowRecovery,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolStarted,
    TurnStarted,
)


def configure_logging(*, json: bool = True, level: str = "info", stream: TextIO | None = None) -> None:
    """Configure structlog: JSON lines (services) or a readable console (CLI), at ``level`` and above."""
    numeric = logging.getLevelNamesMapping().get(level.upper())
    if numeric is None:
        raise ValueError(f"level must be a logging level name such as info or debug, got {level!r}")
    renderer: Any = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )


def get_logger(component: str) -> Any:
    """A structlog logger bound to ``component``."""
    return structlog.get_logger().bind(component=component)


def _fields(event: RunEvent) -> dict[str, Any]:
    if isinstance(event, RunStarted):
        return {"max_turns": event.max_turns}
    if isinstance(event, TurnStarted):
        return {"turn": event.turn}
    if isinstance(event, ModelOutput):
        usage = event.usage
        return {
            "turn": event.turn,
            "finish_reason": event.finish_reason,
            "tool_calls": len(event.message.tool_calls),
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
        }
    if isinstance(event, ToolStarted):
        return {"turn": event.turn, "tool": event.call.name, "call_id": event.call.id}
    if isinstance(event, ToolFinished):
        return {
            "turn": event.turn,
            "tool": event.call.name,
            "call_id": event.call.id,
            "status": event.status.value,
            "duration_s": round(event.duration_s, 6),
        }
    if isinstance(event, OverflowRecovery):
        return {"turn": event.turn, "attempt": event.attempt}
    if isinstance(event, ExternalWaitFinished):
        return {"turn": event.turn, "wait_kind": event.wait_kind, "duration_s": round(event.duration_s, 6)}
    if isinstance(event, RunFinished):
        return {"status": event.status, "turns": event.turns}
    return {}


class StructlogEventSink:
    """A :class:`RunEventSink` writing one operational log line per lifecycle event."""

    def __init__(self, logger: Any = None) -> None:
        self.logger = logger if logger is not None else get_logger("runtime")

    def emit(self, event: RunEvent) -> None:
        method = self.logger.warning if isinstance(event, OverflowRecovery) else self.logger.info
        method(event.kind, run_id=event.run_id, context_id=event.context_id, **_fields(event))
