"""User-turn and fixed grouping, recent splits and entry conversion."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.context.grouping import (
    FixedGrouping,
    GroupingError,
    IncompleteGroupError,
    IsolatedOpeningError,
    NonTextEntryError,
    UnknownRoleError,
    entries_from_messages,
    group_messages,
    keep_last_groups,
    messages_from_entries,
    split_recent,
)
from sciencediscovery.runtime_core import Message, ToolCall

U = Message.user
A = Message.assistant


def test_user_turn_group_keeps_assistant_messages_and_tool_results_after_the_user() -> None:
    call = ToolCall("c1", "search")
    history = [U("q1"), A("", [call]), Message.tool_result(call, "r"), A("a1"), U("q2"), A("a2"), U("q3")]
    groups = group_messages(history)
    assert [len(g) for g in groups] == [4, 2, 1]
    assert groups[2] == (history[-1],)  # the unanswered round is its own group


def test_isolated_opening_is_rejected() -> None:
    with pytest.raises(IsolatedOpeningError, match=r"history\[0\]"):
        group_messages([A("hello"), U("q")])


def test_system_message_is_rejected_as_ungroupable_role() -> None:
    with pytest.raises(UnknownRoleError, match=r"turns\[1\].*system"):
        group_messages([U("q"), Message.system("s")], field="turns")


def test_fixed_grouping_requires_complete_groups_starting_at_a_user_message() -> None:
    history = [U("q1"), A("a1"), U("q2"), A("a2")]
    assert group_messages(history, FixedGrouping(2)) == ((history[0], history[1]), (history[2], history[3]))
    with pytest.raises(IncompleteGroupError):
        group_messages(history[:3], FixedGrouping(2))
    with pytest.raises(IsolatedOpeningError):
        group_messages([U("q"), A("a"), A("b"), U("c")], FixedGrouping(2))
    with pytest.raises(GroupingError, match="size"):
        FixedGrouping(0)


def test_split_recent_keeps_the_tail_unchanged_and_zero_keeps_nothing() -> None:
    history = [U("q1"), A("a1"), U("q2"), A("a2"), U("q3")]
    split = split_recent(history, 2)
    assert split.old == (history[0], history[1])
    assert split.recent == tuple(history[2:])
    assert (split.old_groups, split.recent_groups) == (1, 2)
    assert keep_last_groups(history, 0) == ()
    assert split_recent(history, 9).old == ()
    with pytest.raises(GroupingError, match="keep_groups"):
        split_recent(history, -1)


def test_entries_reject_unknown_roles_and_non_text_content() -> None:
    assert messages_from_entries([{"role": "user", "content": "q"}]) == (U("q"),)
    with pytest.raises(UnknownRoleError, match=r"history\[0\].*'robot'"):
        messages_from_entries([{"role": "robot", "content": "x"}])
    with pytest.raises(NonTextEntryError, match=r"history\[1\]"):
        messages_from_entries([{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"image": 1}]}])
    with pytest.raises(NonTextEntryError):
        messages_from_entries("not a list")


roles = st.lists(st.sampled_from(["user", "assistant"]), max_size=12).map(lambda r: ["user", *r])


@settings(max_examples=60, deadline=None)
@given(roles, st.integers(min_value=0, max_value=6))
def test_split_never_breaks_a_group(role_list: list[str], keep: int) -> None:
    entries = [{"role": role, "content": f"m{i}"} for i, role in enumerate(role_list)]
    history = messages_from_entries(entries)
    assert entries_from_messages(history) == entries
    split = split_recent(history, keep)
    assert split.old + split.recent == history
    assert not split.recent or split.recent[0].role.value == "user"
    assert group_messages(split.old) + group_messages(split.recent) == group_messages(history)
