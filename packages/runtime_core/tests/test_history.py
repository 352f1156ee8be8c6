from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sciencediscovery.runtime_core import (
    DecodeError,
    HistoryError,
    InvalidRunRequestError,
    Message,
    ModelInput,
    ModelResponse,
    Role,
    RunRequest,
    ToolCall,
    ToolSpec,
    Usage,
    check_pairing,
    open_tool_calls,
)
from sciencediscovery.runtime_core.serialization import event_to_json, from_json, to_json


def test_tool_result_requires_call_id_and_status():
    with pytest.raises(HistoryError, match="tool_call_id"):
        Message(Role.TOOL, "x")
    with pytest.raises(HistoryError, match="only assistant messages may carry tool calls"):
        Message(Role.USER, "x", tool_calls=(ToolCall("a", "b"),))
    with pytest.raises(HistoryError, match="ToolCall.id must be a non-empty string"):
        ToolCall("", "read_file")


def test_model_response_must_be_assistant():
    with pytest.raises(HistoryError, match="assistant"):
        ModelResponse(Message.user("hi"))


def test_check_pairing_finds_orphans_open_calls_and_reuse():
    call = ToolCall("c1", "t")
    with pytest.raises(HistoryError, match="answers no open tool call"):
        check_pairing([Message.user("x"), Message.tool_result(call, "r")])
    with pytest.raises(HistoryError, match="have no result before the next message"):
        check_pairing([Message.assistant("", [call]), Message.user("next")])
    with pytest.raises(HistoryError, match="have no result"):
        check_pairing([Message.assistant("", [call])])
    check_pairing([Message.assistant("", [call])], allow_open=True)
    with pytest.raises(HistoryError, match="used twice"):
        check_pairing(
            [Message.assistant("", [call]), Message.tool_result(call, "r"), Message.assistant("", [call])],
            allow_open=True,
        )


def test_open_tool_calls_in_declared_order():
    a, b, c = ToolCall("a", "t"), ToolCall("b", "t"), ToolCall("c", "t")
    history = [Message.assistant("", [a, b, c]), Message.tool_result(b, "r")]
    assert open_tool_calls(history) == [a, c]


def test_run_request_rejects_bad_fields_by_name():
    with pytest.raises(InvalidRunRequestError, match="RunRequest.max_turns must be a positive integer"):
        RunRequest("ctx", [], max_turns=0)
    with pytest.raises(InvalidRunRequestError, match="RunRequest.context_id"):
        RunRequest("  ", [])
    with pytest.raises(InvalidRunRequestError, match="RunRequest.history"):
        RunRequest("ctx", [Message.tool_result(ToolCall("x", "t"), "orphan")])


texts = st.text(max_size=40)
calls = st.builds(
    ToolCall,
    id=st.text(min_size=1, max_size=8),
    name=st.text(min_size=1, max_size=8),
    arguments=st.dictionaries(st.text(max_size=5), st.integers() | texts, max_size=3),
)
messages = st.one_of(
    st.builds(Message.user, texts),
    st.builds(Message.system, texts),
    st.builds(lambda t, cs: Message.assistant(t, cs), texts, st.lists(calls, max_size=3)),
    st.builds(lambda c, t: Message.tool_result(c, t), calls, texts),
)


@given(st.lists(messages, max_size=6), st.lists(st.builds(ToolSpec, name=st.text(min_size=1, max_size=8)), max_size=2))
def test_json_round_trip_of_model_input(history, tools):
    value = ModelInput("system", tuple(history), tuple(tools), {"purpose": "turn"})
    assert from_json(to_json(value), ModelInput) == value


def test_structuring_rejects_unknown_keys():
    data = to_json(Message.user("hi"))
    data["role_override"] = "system"
    with pytest.raises(DecodeError, match="role_override"):
        from_json(data, Message)


def test_event_json_carries_kind():
    from sciencediscovery.runtime_core import ModelOutput

    event = ModelOutput(
        run_id="r", context_id="c", turn=1, message=Message.assistant("x"), finish_reason="stop", usage=Usage(3, 4)
    )
    data = event_to_json(event)
    assert data["kind"] == "model_output"
    assert data["usage"] == {"input_tokens": 3, "output_tokens": 4, "cached_tokens": 0}
