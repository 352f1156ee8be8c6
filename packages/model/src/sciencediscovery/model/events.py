"""Run events of the model package, sent through the turn's event sink."""

from __future__ import annotations

from typing import ClassVar

import attrs

from sciencediscovery.runtime_core import RunEvent


@attrs.frozen(kw_only=True)
class ModelStreamDelta(RunEvent):
    """A piece of the model's answer as it arrives: text, or a fragment of one tool call.

    ``attempt`` counts from 1; after a :class:`ModelRetry` the next attempt's
    deltas start the answer afresh.
    """

    kind: ClassVar[str] = "model_stream_delta"
    turn: int
    attempt: int
    text: str = ""
    tool_call_index: int | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    arguments_delta: str = ""


@attrs.frozen(kw_only=True)
class ModelRetry(RunEvent):
    """An attempt failed with a retryable error; the client waits ``delay_s`` and tries again."""

    kind: ClassVar[str] = "model_retry"
    turn: int
    attempt: int
    reason: str
    message: str
    delay_s: float
    status: int | None = None
