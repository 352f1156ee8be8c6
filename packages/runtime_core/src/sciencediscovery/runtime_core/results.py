"""Run requests and terminal results."""

from __future__ import annotations

import enum
import uuid

import attrs

from .errors import InvalidRunRequestError
from .history import Message, check_pairing, message_tuple


class RunStatus(str, enum.Enum):
    """The four terminal states of a run."""

    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"
    TURN_LIMIT = "turn_limit"


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidRunRequestError(f"RunRequest.{attribute.name} must be a positive integer, got {value!r}")


def _non_empty_id(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidRunRequestError(f"RunRequest.{attribute.name} must be a non-empty string, got {value!r}")


def _paired(instance: object, attribute: attrs.Attribute[tuple[Message, ...]], value: tuple[Message, ...]) -> None:
    try:
        check_pairing(value, allow_open=True)
    except ValueError as error:
        raise InvalidRunRequestError(f"RunRequest.history: {error}") from error


@attrs.frozen
class RunRequest:
    """What to run: the conversation so far and the model-turn bound.

    A history whose last step has calls without results (a run interrupted
    mid-step) is accepted; the kernel closes those calls with cancelled
    results before the first turn. ``first_turn`` numbers this run's turns
    after those of earlier runs of the same context (events, traces and tool
    visibility use it); ``max_turns`` bounds this run alone.
    """

    context_id: str = attrs.field(validator=_non_empty_id)
    history: tuple[Message, ...] = attrs.field(converter=message_tuple, validator=_paired)
    max_turns: int = attrs.field(default=50, validator=_positive)
    run_id: str = attrs.field(factory=lambda: f"run-{uuid.uuid4().hex[:12]}", validator=_non_empty_id)
    first_turn: int = attrs.field(default=1, validator=_positive)


@attrs.frozen
class RunTimings:
    """Where a run's wall time went. External waits are not model time."""

    total_s: float = 0.0
    model_s: float = 0.0
    tools_s: float = 0.0
    external_wait_s: float = 0.0


@attrs.frozen
class RunResult:
    """The one terminal result of a run."""

    run_id: str
    context_id: str
    status: RunStatus
    reason: str
    history: tuple[Message, ...]
    turns: int
    final_message: Message | None = None
    error_type: str | None = None
    timings: RunTimings = attrs.field(factory=RunTimings)
