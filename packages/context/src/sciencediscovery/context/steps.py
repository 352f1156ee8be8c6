"""Atomic history units: an assistant tool call and its results are one unit.

Every other message is a unit of its own. Units are the granularity of every
history reduction in the agent loop, so no call is ever split from its result.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from sciencediscovery.runtime_core import Message, Role

CHECKPOINT_KEY = "context_checkpoint"
"""Message metadata key marking the standing checkpoint message."""
COMPACTION_NOTE_KEY = "context_compaction_note"
"""Message metadata key marking the note left by message-count compaction."""


@attrs.frozen
class Unit:
    """A slice ``history[start:end]``; ``open`` when an assistant call in it has no result."""

    start: int
    end: int
    open: bool = False


def split_units(history: Sequence[Message]) -> list[Unit]:
    """The atomic units of ``history`` in order (results follow their assistant message)."""
    units: list[Unit] = []
    index = 0
    count = len(history)
    while index < count:
        message = history[index]
        end = index + 1
        if message.role is Role.ASSISTANT and message.tool_calls:
            wanted = {call.id for call in message.tool_calls}
            while end < count and history[end].role is Role.TOOL:
                wanted.discard(history[end].tool_call_id or "")
                end += 1
            units.append(Unit(index, end, open=bool(wanted)))
        else:
            units.append(Unit(index, end))
        index = end
    return units


def is_checkpoint(message: Message) -> bool:
    return bool(message.metadata.get(CHECKPOINT_KEY))


def task_anchor_index(history: Sequence[Message]) -> int | None:
    """Index of the task anchor: the first user message that is not a checkpoint or compaction note."""
    for index, message in enumerate(history):
        if message.role is Role.USER and not is_checkpoint(message) and not message.metadata.get(COMPACTION_NOTE_KEY):
            return index
    return None


def checkpoint_index(history: Sequence[Message]) -> int | None:
    """Index of the standing checkpoint message, if any (compaction keeps at most one)."""
    for index, message in enumerate(history):
        if is_checkpoint(message):
            return index
    return None
