"""The anthropic provider through the official SDK against a loopback server speaking Messages SSE."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from sciencediscovery.model import (
    ClientSettings,
    MissingExtraError,
    ModelRetry,
    ModelServerError,
    ModelStreamDelta,
    ModelTimeoutError,
    ProviderModelClient,
    ProviderRegistry,
    RetryPolicy,
)
from sciencediscovery.model.plugin import BUILTIN_PROVIDERS
from sciencediscovery.runtime_core import (
    ConfigurationError,
    ContextOverflowError,
    Message,
    ModelInput,
    ToolCall,
    ToolResultStatus,
    ToolSpec,
    Usage,
)

MODEL = "claude-sonnet-4-6"


def message_start(sse: Any, input_tokens: int = 849, cache_read: int = 0) -> str:
    message = {
        "id": "msg_01K2JbSUMYhez5RHoK9ZCj9U",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": cache_read,
            "output_tokens": 1,
            "service_tier": "standard",
        },
    }
    return sse({"type": "message_start", "message": message}, "message_start")


def block_start(sse: Any, index: int, block: dict[str, Any]) -> str:
    return sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")


def block_delta(sse: Any, index: int, delta: dict[str, Any]) -> str:
    return sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")


def block_stop(sse: Any, index: int) -> str:
    return sse({"type": "content_block_stop", "index": index}, "content_block_stop")


def message_end(sse: Any, stop_reason: str, output_tokens: int) -> list[str]:
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }
    return [sse(delta, "message_delta"), sse({"type": "message_stop"}, "message_stop")]


def text_reply(sse: Any, text: str) -> list[str]:
    return [
        message_start(sse),
        block_start(sse, 0, {"type": "text", "text": ""}),
        block_delta(sse, 0, {"type": "text_delta", "text": text}),
        block_stop(sse, 0),
        *message_end(sse, "end_turn", 3),
    ]


def make_client(
    base_url: str, fake_sleep: Any, environ: dict[str, str] | None = None, timeout_s: float = 10.0
) -> ProviderModelClient:
    settings = ClientSettings(timeout_s=timeout_s, retry=RetryPolicy(max_attempts=3))
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": base_url, **(environ or {})}
    provider = ProviderRegistry(BUILTIN_PROVIDERS).create(f"anthropic:{MODEL}", settings=settings, environ=env)
    return ProviderModelClient(provider, settings=settings, sleep=fake_sleep, rng=lambda: 0.0)


SIMPLE_INPUT = ModelInput("Be brief.", [Message.user("hi")])


def test_tool_use_streamed_across_events_assembles_with_usage(loopback, sse_event, reply, turn, fake_sleep):
    sse = sse_event
    events = [
        message_start(sse, input_tokens=849, cache_read=100),
        block_start(sse, 0, {"type": "text", "text": ""}),
        sse({"type": "ping"}, "ping"),
        block_delta(sse, 0, {"type": "text_delta", "text": "I'll read"}),
        block_delta(sse, 0, {"type": "text_delta", "text": " the skill."}),
        block_stop(sse, 0),
        block_start(sse, 1, {"type": "tool_use", "id": "toolu_01KFb", "name": "read_skill", "input": {}}),
        block_delta(sse, 1, {"type": "input_json_delta", "partial_json": ""}),
        block_delta(sse, 1, {"type": "input_json_delta", "partial_json": '{"name": "lit'}),
        block_delta(sse, 1, {"type": "input_json_delta", "partial_json": 'erature-review"}'}),
        block_stop(sse, 1),
        *message_end(sse, "tool_use", 47),
    ]
    loopback.add(reply(events=events))
    earlier = ToolCall("toolu_00", "list_skills", {})
    model_input = ModelInput(
        "You are a careful scientist.",
        [
            Message.system("Plan: search, screen, synthesize."),
            Message.user("Review TP53 resistance."),
            Message.assistant("Listing skills.", [earlier]),
            Message.tool_result(earlier, "no skills index", status=ToolResultStatus.ERROR),
            Message.user("Use the literature review skill."),
        ],
        [ToolSpec("read_skill", "Read a skill", {"type": "object", "properties": {"name": {"type": "string"}}})],
    )

    response = asyncio.run(make_client(loopback.url, fake_sleep).complete(model_input, turn.context))

    assert response.message.content == "I'll read the skill."
    assert response.message.tool_calls == (ToolCall("toolu_01KFb", "read_skill", {"name": "literature-review"}),)
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(input_tokens=949, output_tokens=47, cached_tokens=100)
    deltas = [e for e in turn.sink.events if isinstance(e, ModelStreamDelta)]
    assert "".join(d.text for d in deltas) == "I'll read the skill."
    assert [d.tool_name for d in deltas if d.tool_name] == ["read_skill"]

    request = loopback.requests[0]
    assert request.path == "/v1/messages"
    assert "sk-ant-test" in request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
    assert "anthropic-version" in request.headers
    body = request.json
    assert body["model"] == MODEL and body["stream"] is True
    assert body["max_tokens"] == 64_000
    assert body["system"] == "You are a careful scientist.\n\nPlan: search, screen, synthesize."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Review TP53 resistance."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Listing skills."},
                {"type": "tool_use", "id": "toolu_00", "name": "list_skills", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_00", "content": "no skills index", "is_error": True},
                {"type": "text", "text": "Use the literature review skill."},
            ],
        },
    ]
    assert body["tools"] == [
        {
            "name": "read_skill",
            "description": "Read a skill",
            "input_schema": {"type": "object", "properties": {"name": {"type": "string"}}},
        }
    ]


def test_prompt_too_long_becomes_the_kernels_overflow_error(loopback, reply, turn, fake_sleep):
    too_long = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "prompt is too long: 208310 tokens > 200000 maximum"},
    }
    loopback.add(reply(400, body=too_long))

    with pytest.raises(ContextOverflowError) as raised:
        asyncio.run(make_client(loopback.url, fake_sleep).complete(SIMPLE_INPUT, turn.context))

    assert "prompt is too long" in str(raised.value)
    assert len(loopback.requests) == 1


def test_rate_limit_then_overloaded_then_success(loopback, sse_event, reply, turn, fake_sleep, recorded_sleeps):
    rate_limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests exceeded"}}
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    loopback.add(
        reply(429, headers={"retry-after": "3"}, body=rate_limited),
        reply(529, body=overloaded),
        reply(events=text_reply(sse_event, "done")),
    )

    response = asyncio.run(make_client(loopback.url, fake_sleep).complete(SIMPLE_INPUT, turn.context))

    assert response.message.content == "done"
    retries = [e for e in turn.sink.events if isinstance(e, ModelRetry)]
    assert [(r.reason, r.status, r.message) for r in retries] == [
        ("rate_limited", 429, "Number of requests exceeded"),
        ("server_error", 529, "Overloaded"),
    ]
    assert recorded_sleeps == [3.0, RetryPolicy().delay(2, None, 0.0)]


def test_an_error_event_inside_the_stream_is_a_retryable_server_error(loopback, sse_event, reply, turn, fake_sleep):
    sse = sse_event
    overloaded = sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error")
    loopback.add(*[reply(events=[message_start(sse), overloaded]) for _ in range(3)])

    with pytest.raises(ModelServerError) as raised:
        asyncio.run(make_client(loopback.url, fake_sleep).complete(SIMPLE_INPUT, turn.context))

    assert raised.value.provider_message == "Overloaded"
    assert len(loopback.requests) == 3


def test_server_errors_exhaust_retries(loopback, reply, turn, fake_sleep, recorded_sleeps):
    failing = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
    loopback.add(*[reply(500, body=failing) for _ in range(3)])

    with pytest.raises(ModelServerError) as raised:
        asyncio.run(make_client(loopback.url, fake_sleep).complete(SIMPLE_INPUT, turn.context))

    assert (raised.value.status, raised.value.provider_message) == (500, "Internal server error")
    assert len(loopback.requests) == 3
    assert len(recorded_sleeps) == 2


def test_a_silent_server_times_out(loopback, reply, turn, fake_sleep):
    loopback.add(*[reply(stall=True) for _ in range(3)])

    with pytest.raises(ModelTimeoutError):
        asyncio.run(make_client(loopback.url, fake_sleep, timeout_s=0.2).complete(SIMPLE_INPUT, turn.context))

    assert [e.reason for e in turn.sink.events if isinstance(e, ModelRetry)] == ["timeout", "timeout"]


def test_cancelling_mid_stream_closes_the_in_flight_request(
    loopback, sse_event, reply, fake_sleep, cancel_after_first_delta
):
    sse = sse_event
    events = [
        message_start(sse),
        block_start(sse, 0, {"type": "text", "text": ""}),
        block_delta(sse, 0, {"type": "text_delta", "text": "Hel"}),
    ]
    loopback.add(reply(events=events, hang=True))

    asyncio.run(cancel_after_first_delta(make_client(loopback.url, fake_sleep), SIMPLE_INPUT))

    assert loopback.disconnected.wait(10), "the server never saw the client close the stream"


def test_an_anthropic_key_is_required_at_startup():
    with pytest.raises(ConfigurationError) as raised:
        ProviderRegistry(BUILTIN_PROVIDERS).create(f"anthropic:{MODEL}", environ={})

    assert raised.value.variable == "ANTHROPIC_API_KEY"


def test_output_reserve_override_sets_max_tokens(loopback, sse_event, reply, turn, fake_sleep):
    loopback.add(reply(events=text_reply(sse_event, "ok")))

    client = make_client(loopback.url, fake_sleep, {"OUTPUT_RESERVE_TOKENS": "2048"})
    asyncio.run(client.complete(SIMPLE_INPUT, turn.context))

    assert loopback.requests[0].json["max_tokens"] == 2048


def test_missing_sdk_is_an_error_naming_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)

    with pytest.raises(MissingExtraError) as raised:
        ProviderRegistry(BUILTIN_PROVIDERS).create(f"anthropic:{MODEL}", environ={"ANTHROPIC_API_KEY": "k"})

    assert raised.value.pip_command == "pip install 'sciencediscovery-model[anthropic]'"
