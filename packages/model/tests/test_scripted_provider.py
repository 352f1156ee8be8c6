"""The scripted provider: file validation, turn order, error turns, checkpoint summaries."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.model import (
    CHECKPOINT_SUMMARY_PURPOSE,
    ModelAuthError,
    ModelBadRequestError,
    ModelRetry,
    ModelServerError,
    ProviderModelClient,
    ScriptExhaustedError,
    ScriptFileError,
    structural_summary,
)
from sciencediscovery.model import plugin as model_plugin
from sciencediscovery.runtime_core import (
    ContextOverflowError,
    Message,
    ModelInput,
    ToolCall,
    ToolResultStatus,
    make_plugin_manager,
)

USER_INPUT = ModelInput("system", [Message.user("go")])


def write_script(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def scripted_client(path: Path, fake_sleep: Any = None) -> ProviderModelClient:
    manager = make_plugin_manager(load_entry_points=False, plugins=[model_plugin])
    client = ProviderModelClient.from_spec(f"scripted:{path}", plugin_manager=manager, environ={})
    if fake_sleep is not None:
        client = ProviderModelClient(client.provider, settings=client.settings, sleep=fake_sleep)
    return client


def summary_input(*messages: Message, sections: Any = None) -> ModelInput:
    metadata: dict[str, Any] = {"purpose": CHECKPOINT_SUMMARY_PURPOSE}
    if sections is not None:
        metadata["checkpoint_sections"] = sections
    return ModelInput("Summarize.", messages, metadata=metadata)


def test_turns_are_answered_in_order_with_tool_calls(tmp_path, turn):
    path = write_script(
        tmp_path,
        {
            "turns": [
                {
                    "content": "Reading.",
                    "tool_calls": [{"id": "call-1", "name": "read_skill", "arguments": {"name": "literature-review"}}],
                },
                {"tool_calls": [{"name": "search"}, {"name": "fetch", "arguments": '{"url": '}]},
                {"content": "final answer"},
            ]
        },
    )
    client = scripted_client(path)

    first, second, third = (asyncio.run(client.complete(USER_INPUT, turn.context)) for _ in range(3))

    assert first.message.content == "Reading."
    assert first.message.tool_calls == (ToolCall("call-1", "read_skill", {"name": "literature-review"}),)
    assert first.finish_reason == "tool_calls"
    search, fetch = second.message.tool_calls
    assert (search.id, search.arguments, search.argument_error) == ("call-2-1", {}, None)
    assert fetch.id == "call-2-2" and fetch.arguments == {} and "not valid JSON" in (fetch.argument_error or "")
    assert (third.message.content, third.message.tool_calls, third.finish_reason) == ("final answer", (), "stop")
    assert third.model == str(path)


def test_running_out_of_turns_names_the_file_and_turn(tmp_path, turn):
    path = write_script(tmp_path, {"turns": [{"content": "only"}]})
    client = scripted_client(path)
    asyncio.run(client.complete(USER_INPUT, turn.context))

    with pytest.raises(ScriptExhaustedError) as raised:
        asyncio.run(client.complete(USER_INPUT, turn.context))

    assert str(path) in str(raised.value) and "turn 2" in str(raised.value)
    assert (raised.value.turn, raised.value.available) == (2, 1)


def test_every_problem_is_reported_with_its_json_path(tmp_path):
    path = write_script(
        tmp_path,
        {
            "turns": [
                {"content": 3},
                {"tool_calls": [{"id": "a", "name": ""}, {"id": "a", "name": "x", "arguments": [1], "extra": 1}]},
                {"error": "meltdown"},
                {},
                "text",
            ],
            "summaries": "not a list",
            "model": "x",
        },
    )

    with pytest.raises(ScriptFileError) as raised:
        scripted_client(path)

    assert raised.value.path == str(path)
    assert set(raised.value.problems) == {
        "$.model: unknown key (allowed: turns, summaries)",
        "$.turns[0].content: must be a string, got int",
        "$.turns[1].tool_calls[0].name: must be a non-empty string, got ''",
        "$.turns[1].tool_calls[1].extra: unknown key (allowed: id, name, arguments)",
        "$.turns[1].tool_calls[1].id: 'a' is already used at $.turns[1].tool_calls[0]",
        "$.turns[1].tool_calls[1].arguments: must be an object (or a raw JSON string), got list",
        "$.turns[2].error: must be one of context_overflow, rate_limit, server_error, timeout, auth, bad_request, "
        "got 'meltdown'",
        "$.turns[3]: a turn needs 'content', 'tool_calls' or 'error'",
        "$.turns[4]: must be an object, got str",
        "$.summaries: must be a list of strings, got str",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [('{"turns": [', "not valid JSON"), ("[]", "must be an object with 'turns'"), ("{}", "$.turns: must be a list")],
)
def test_unreadable_files_are_rejected_at_startup(tmp_path, text, expected):
    with pytest.raises(ScriptFileError) as raised:
        scripted_client(write_script(tmp_path, text))

    assert expected in str(raised.value)


def test_a_missing_file_is_a_script_file_error(tmp_path):
    with pytest.raises(ScriptFileError) as raised:
        scripted_client(tmp_path / "absent.json")

    assert "cannot read the file" in str(raised.value)


@pytest.mark.parametrize(
    ("kind", "error_type"),
    [("context_overflow", ContextOverflowError), ("auth", ModelAuthError), ("bad_request", ModelBadRequestError)],
)
def test_error_turns_raise_the_named_normalized_error(tmp_path, turn, kind, error_type):
    client = scripted_client(write_script(tmp_path, {"turns": [{"error": kind, "message": "scripted failure"}]}))

    with pytest.raises(error_type, match="scripted failure"):
        asyncio.run(client.complete(USER_INPUT, turn.context))


def test_every_error_kind_of_the_file_format_maps_to_an_error():
    from sciencediscovery.model.script import ERROR_KINDS
    from sciencediscovery.model.scripted import _ERRORS

    assert set(ERROR_KINDS) == {"context_overflow", *_ERRORS}


def test_retryable_error_turns_are_retried_by_the_client_and_consume_turns(tmp_path, turn, fake_sleep, recorded_sleeps):
    script = {"turns": [{"error": "rate_limit", "retry_after": 2}, {"error": "server_error"}, {"content": "recovered"}]}
    client = scripted_client(write_script(tmp_path, script), fake_sleep)

    response = asyncio.run(client.complete(USER_INPUT, turn.context))

    assert response.message.content == "recovered"
    assert [(e.reason, e.status) for e in turn.sink.events if isinstance(e, ModelRetry)] == [
        ("rate_limited", 429),
        ("server_error", 500),
    ]
    assert recorded_sleeps[0] == 2.0


def test_exhausted_retries_surface_the_last_error(tmp_path, turn, fake_sleep):
    script = {"turns": [{"error": "timeout"}, {"error": "timeout"}, {"error": "server_error", "message": "down"}]}
    client = scripted_client(write_script(tmp_path, script), fake_sleep)

    with pytest.raises(ModelServerError, match="down"):
        asyncio.run(client.complete(USER_INPUT, turn.context))

    assert [e.reason for e in turn.sink.events if isinstance(e, ModelRetry)] == ["timeout", "timeout"]


def test_summary_requests_use_summaries_in_order_then_a_structural_summary_without_consuming_turns(tmp_path, turn):
    client = scripted_client(
        write_script(tmp_path, {"turns": [{"content": "answer"}], "summaries": ["first", "second"]})
    )
    request = summary_input(Message.user("Find TP53 papers."), sections=["Task", "Progress"])

    answers = [asyncio.run(client.complete(request, turn.context)).message.content for _ in range(3)]

    assert answers[:2] == ["first", "second"]
    assert answers[2] == structural_summary(request)
    assert asyncio.run(client.complete(USER_INPUT, turn.context)).message.content == "answer"


def test_structural_summary_has_one_heading_per_section_and_digests_the_messages():
    call = ToolCall("call-1", "search", {"query": "TP53"})
    request = summary_input(
        Message.system("protected"),
        Message.user("Review TP53 resistance."),
        Message.assistant("Searching.", [call]),
        Message.tool_result(call, "3 papers found", status=ToolResultStatus.OK),
        sections=["Task", "Findings", "Next steps"],
    )

    summary = structural_summary(request)

    assert [line for line in summary.splitlines() if line.startswith("## ")] == [
        "## Task",
        "## Findings",
        "## Next steps",
    ]
    assert "- user: Review TP53 resistance." in summary
    assert '- assistant called search({"query": "TP53"})' in summary
    assert "- tool search (ok): 3 papers found" in summary
    assert "protected" not in summary
    assert structural_summary(request) == summary


def test_structural_summary_without_sections_uses_one_summary_heading():
    assert structural_summary(summary_input(Message.user("x"))).startswith("## Summary\n- user: x")


def test_invalid_checkpoint_sections_are_a_bad_request(tmp_path, turn):
    client = scripted_client(write_script(tmp_path, {"turns": []}))

    with pytest.raises(ModelBadRequestError, match="checkpoint_sections"):
        asyncio.run(client.complete(summary_input(sections="Task"), turn.context))


def test_structural_summary_reads_a_json_lines_transcript_entry_by_entry():
    transcript = "\n".join(
        json.dumps(entry)
        for entry in [
            {"previous_checkpoint": "## Task\n- review TP53"},
            {"role": "user", "content": "Review TP53 resistance."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "name": "search", "arguments": {"q": "TP53"}}],
            },
            {
                "role": "tool",
                "content": "big table",
                "tool_call_id": "c1",
                "name": "search",
                "status": "ok",
                "output_ref": "out-7",
            },
        ]
    )
    request = summary_input(Message.user(transcript), sections=["Primary request and intent", "Next step"])

    summary = structural_summary(request)

    assert summary.splitlines() == [
        "## Primary request and intent",
        "- previous checkpoint: ## Task - review TP53",
        "- user: Review TP53 resistance.",
        '- assistant called search({"q": "TP53"})',
        "- tool search (ok): big table [ref:out-7]",
        "",
        "## Next step",
        "- (nothing recorded by the scripted model)",
    ]
