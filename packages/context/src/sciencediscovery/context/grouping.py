"""History grouping shared by context plans and the agent loop's history compaction.

A *group* is a run of messages that is kept or dropped as a whole, so reduction never
cuts a round in half (nor a tool call from its result).

- ``USER_TURN`` grouping: a group starts at a user message and keeps every assistant
  message (and tool result) after it up to the next user message; a final user message
  without an answer is a group of its own (the unanswered round).
- ``FixedGrouping(size)``: consecutive complete groups of exactly ``size`` messages,
  each starting at a user message.

History that opens with an assistant or tool message (an *isolated opening*), system
messages, unknown roles and non-text entries cannot be grouped and raise typed errors.

API: :func:`group_messages`, :func:`keep_last_groups`, :func:`split_recent` (old segment
and recent tail) and :func:`messages_from_entries` / :func:`entries_from_messages` for
JSON ``{"role", "content"}`` history entries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs

from sciencediscovery.runtime_core import HistoryError, Message, Role

__all__ = [
    "USER_TURN",
    "FixedGrouping",
    "Grouping",
    "GroupingError",
    "IncompleteGroupError",
    "IsolatedOpeningError",
    "NonTextEntryError",
    "RecentSplit",
    "UnknownRoleError",
    "UserTurnGrouping",
    "entries_from_messages",
    "group_messages",
    "keep_last_groups",
    "messages_from_entries",
    "split_recent",
]


class GroupingError(HistoryError):
    """History cannot be grouped; ``field`` names the history and ``index`` the entry at fault."""

    def __init__(self, field: str, index: int | None, message: str) -> None:
        self.field = field
        self.index = index
        where = field if index is None else f"{field}[{index}]"
        super().__init__(f"{where}: {message}")


class IsolatedOpeningError(GroupingError):
    """A group would start at an assistant or tool message: no user message opens it."""


class UnknownRoleError(GroupingError):
    """An entry has a role that grouping does not accept (anything but user, assistant, tool)."""


class NonTextEntryError(GroupingError):
    """An entry is not a text message (content is not a string, or it is not a role/content mapping)."""


class IncompleteGroupError(GroupingError):
    """Fixed grouping would leave a group with fewer messages than its size."""


@attrs.frozen
class UserTurnGrouping:
    """A group per user message plus the answers after it."""

    kind: Literal["user-turn"] = "user-turn"


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GroupingError(attribute.name, None, f"must be a positive integer, got {value!r}")


@attrs.frozen
class FixedGrouping:
    """Complete groups of exactly ``size`` messages, each starting at a user message."""

    size: int = attrs.field(validator=_positive)
    kind: Literal["fixed"] = "fixed"


Grouping = UserTurnGrouping | FixedGrouping
USER_TURN = UserTurnGrouping()
"""The default grouping."""

_GROUPABLE = (Role.USER, Role.ASSISTANT, Role.TOOL)


def group_messages(
    messages: Sequence[Message], grouping: Grouping = USER_TURN, *, field: str = "history"
) -> tuple[tuple[Message, ...], ...]:
    """Split ``messages`` into complete groups, oldest first; raises a :class:`GroupingError`."""
    for index, message in enumerate(messages):
        if message.role not in _GROUPABLE:
            raise UnknownRoleError(field, index, f"role {message.role.value!r} cannot be grouped")
    if isinstance(grouping, FixedGrouping):
        return _fixed_groups(messages, grouping.size, field)
    groups: list[list[Message]] = []
    for index, message in enumerate(messages):
        if message.role is Role.USER:
            groups.append([message])
        elif not groups:
            raise IsolatedOpeningError(field, index, f"history opens with a {message.role.value} message")
        else:
            groups[-1].append(message)
    return tuple(tuple(group) for group in groups)


def _fixed_groups(messages: Sequence[Message], size: int, field: str) -> tuple[tuple[Message, ...], ...]:
    if len(messages) % size:
        raise IncompleteGroupError(
            field, None, f"{len(messages)} messages do not form complete groups of {size} (fixed grouping)"
        )
    groups = tuple(tuple(messages[start : start + size]) for start in range(0, len(messages), size))
    for number, group in enumerate(groups):
        if group[0].role is not Role.USER:
            raise IsolatedOpeningError(field, number * size, f"fixed group {number} opens with {group[0].role.value}")
    return groups


@attrs.frozen
class RecentSplit:
    """History split at a group boundary: ``old`` segment and unchanged ``recent`` tail."""

    old: tuple[Message, ...]
    recent: tuple[Message, ...]
    old_groups: int
    recent_groups: int


def split_recent(
    messages: Sequence[Message], keep_groups: int, grouping: Grouping = USER_TURN, *, field: str = "history"
) -> RecentSplit:
    """Split into the old segment and the last ``keep_groups`` complete groups (0 keeps none)."""
    if isinstance(keep_groups, bool) or not isinstance(keep_groups, int) or keep_groups < 0:
        raise GroupingError("keep_groups", None, f"must be a non-negative integer, got {keep_groups!r}")
    groups = group_messages(messages, grouping, field=field)
    cut = max(len(groups) - keep_groups, 0)
    return RecentSplit(
        old=tuple(m for group in groups[:cut] for m in group),
        recent=tuple(m for group in groups[cut:] for m in group),
        old_groups=cut,
        recent_groups=len(groups) - cut,
    )


def keep_last_groups(
    messages: Sequence[Message], keep_groups: int, grouping: Grouping = USER_TURN, *, field: str = "history"
) -> tuple[Message, ...]:
    """The last ``keep_groups`` complete groups of ``messages`` (the recent tail of :func:`split_recent`)."""
    return split_recent(messages, keep_groups, grouping, field=field).recent


def messages_from_entries(entries: Any, *, field: str = "history") -> tuple[Message, ...]:
    """Read JSON history entries ``{"role": "user"|"assistant", "content": str}`` as messages.

    Other roles raise :class:`UnknownRoleError`; entries that are not role/content
    mappings with string content raise :class:`NonTextEntryError`.
    """
    if not isinstance(entries, Sequence) or isinstance(entries, str | bytes):
        raise NonTextEntryError(field, None, f"history must be a list of entries, got {type(entries).__name__}")
    messages: list[Message] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or set(entry) != {"role", "content"}:
            raise NonTextEntryError(field, index, "an entry must be a mapping with exactly 'role' and 'content'")
        if entry["role"] not in (Role.USER.value, Role.ASSISTANT.value):
            raise UnknownRoleError(field, index, f"role {entry['role']!r} is not 'user' or 'assistant'")
        if not isinstance(entry["content"], str):
            raise NonTextEntryError(field, index, f"content is {type(entry['content']).__name__}, not text")
        messages.append(Message(Role(entry["role"]), entry["content"]))
    return tuple(messages)


def entries_from_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """The JSON history entries of text messages (inverse of :func:`messages_from_entries`)."""
    return [{"role": m.role.value, "content": m.content} for m in messages]
