"""The openai provider through the official SDK against a loopback server speaking Chat Completions SSE."""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import Any

import pytest

from sciencediscovery.model import (
    ClientSettings,
    MissingExtraError,
    ModelAuthError,
    ModelBadRequestError,
    ModelConnectionError,
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
    ToolSpec,
    Usage,
)

DONE = "data: [DONE]\n\n"


def chunk(sse: Any, delta: dict[str, Any] | None = None, finish: str | None = None, usage: Any = None) -> str:
    body: dict[str, Any] = {
        "id": "chatcmpl-abc123",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_1",
        "choices": [] if usage else [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}],
    }
    if usage:
        body["usage"] = usage
    return sse(body)


def tool_delta(index: int, arguments: str, call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    """A delta carrying one tool-call fragment; the first fragment of a call has its id, type and name."""
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id:
        call.update(id=call_id, type="function")
        call["function"]["name"] = name
    return {"tool_calls": [call]}


def text_stream(sse: Any, *pieces: str) -> list[str]:
    events = [chunk(sse, {"role": "assistant", "content": ""})]
    events += [chunk(sse, {"content": piece}) for piece in pieces]
    events += [
        chunk(sse, finish="stop"),
        chunk(sse, usage={"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}),
    ]
    return [*events, DONE]


def make_client(
    base_url: str, fake_sleep: Any, *, attempts: int = 3, timeout_s: float = 10.0, proxy: str | None = None
) -> ProviderModelClient:
    settings = ClientSettings(timeout_s=timeout_s, retry=RetryPolicy(max_attempts=attempts), proxy=proxy)
    environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": base_url}
    provider = ProviderRegistry(BUILTIN_PROVIDERS).create("openai:gpt-4o-mini", settings=settings, environ=environ)
    return ProviderModelClient(provider, settings=settings, sleep=fake_sleep, rng=lambda: 0.5)


SIMPLE_INPUT = ModelInput("You are careful.", [Message.user("hi")])


def test_text_and_tool_calls_split_across_chunks_assemble_into_one_turn(loopback, sse_event, reply, turn, fake_sleep):
    sse = sse_event
    events = [
        chunk(sse, {"role": "assistant", "content": ""}),
        chunk(sse, {"content": "Let me "}),
        chunk(sse, {"content": "check."}),
        chunk(sse, tool_delta(0, "", "call_a", "read_skill")),
        chunk(sse, tool_delta(0, '{"na')),
        chunk(sse, tool_delta(1, '{"query"', "call_b", "search")),
        chunk(sse, tool_delta(0, 'me": "literature')),
        chunk(sse, tool_delta(1, ': "TP53 resistance"}')),
        chunk(sse, tool_delta(0, '-review"}')),
        chunk(sse, finish="tool_calls"),
        chunk(sse, usage={"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
                          "prompt_tokens_details": {"cached_tokens": 64}}),
        DONE,
    ]  # fmt: skip
    loopback.add(reply(events=events))
    earlier = ToolCall("call_0", "list_skills", {"scope": "all"})
    model_input = ModelInput(
        "You are a careful scientist.",
        [
            Message.user("Review TP53 resistance."),
            Message.assistant("", [earlier]),
            Message.tool_result(earlier, "literature-review"),
        ],
        [ToolSpec("read_skill", "Read a skill", {"type": "object", "properties": {"name": {"type": "string"}}})],
    )

    response = asyncio.run(make_client(loopback.url + "/v1", fake_sleep).complete(model_input, turn.context))

    assert response.message.content == "Let me check."
    assert response.message.tool_calls == (
        ToolCall("call_a", "read_skill", {"name": "literature-review"}),
        ToolCall("call_b", "search", {"query": "TP53 resistance"}),
    )
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(input_tokens=120, output_tokens=30, cached_tokens=64)
    assert response.model == "gpt-4o-mini"
    deltas = [e for e in turn.sink.events if isinstance(e, ModelStreamDelta)]
    assert "".join(d.text for d in deltas) == "Let me check."
    assert "".join(d.arguments_delta for d in deltas if d.tool_call_index == 0) == '{"name": "literature-review"}'
    assert all(d.turn == 1 and d.attempt == 1 and d.run_id == "run-1" for d in deltas)

    request = loopback.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.json
    assert body["model"] == "gpt-4o-mini" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "You are a careful scientist."},
        {"role": "user", "content": "Review TP53 resistance."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "list_skills", "arguments": '{"scope": "all"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": "literature-review"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_skill",
                "description": "Read a skill",
                "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        }
    ]


def test_malformed_argument_json_becomes_an_argument_error_not_a_crash(loopback, sse_event, reply, turn, fake_sleep):
    sse = sse_event
    call = {
        "index": 0,
        "id": "call_x",
        "type": "function",
        "function": {"name": "read_skill", "arguments": '{"name": "lit'},
    }
    loopback.add(
        reply(events=[chunk(sse, {"role": "assistant", "tool_calls": [call]}), chunk(sse, finish="tool_calls"), DONE])
    )

    response = asyncio.run(make_client(loopback.url + "/v1", fake_sleep).complete(SIMPLE_INPUT, turn.context))

    (parsed,) = response.message.tool_calls
    assert parsed.id == "call_x" and parsed.name == "read_skill"
    assert parsed.arguments == {}
    assert parsed.argument_error is not None and "not valid JSON" in parsed.argument_error


OPENAI_OVERFLOW = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 "
        "tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
VLLM_OVERFLOW = {
    "object": "error",
    "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
    "(4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
LLAMA_CPP_OVERFLOW = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 5000,
        "n_ctx": 4096,
    }
}


@pytest.mark.parametrize(
    "body", [OPENAI_OVERFLOW, VLLM_OVERFLOW, LLAMA_CPP_OVERFLOW], ids=["openai", "vllm", "llama.cpp"]
)
def test_overflow_answers_become_the_kernels_overflow_error_without_retry(loopback, reply, turn, fake_sleep, body):
    loopback.add(reply(400, body=body))

    with pytest.raises(ContextOverflowError) as raised:
        asyncio.run(make_client(loopback.url + "/v1", fake_sleep).complete(SIMPLE_INPUT, turn.context))

    assert raised.value.provider == "openai"
    assert len(loopback.requests) == 1
    assert not [e for e in turn.sink.events if isinstance(e, ModelRetry)]


def test_rate_limit_with_retry_after_is_retried_after_the_asked_delay(
    loopback, sse_event, reply, turn, fake_sleep, recorded_sleeps
):
    rate_limited = {
        "error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}
    }
    loopback.add(
        reply(429, headers={"Retry-After": "7"}, body=rate_limited), reply(events=text_stream(sse_event, "ok"))
    )

    response = asyncio.run(make_client(loopback.url + "/v1", fake_sleep).complete(SIMPLE_INPUT, turn.context))

    assert response.message.content == "ok"
    assert recorded_sleeps == [7.0]
    (retry,) = [e for e in turn.sink.events if isinstance(e, ModelRetry)]
    assert (retry.reason, retry.status, retry.attempt, retry.delay_s) == ("rate_limited", 429, 1, 7.0)
    assert retry.message == "Rate limit reached for requests"
    assert len(loopback.requests) == 2
    assert [d.attempt for d in turn.sink.events if isinstance(d, ModelStreamDelta)] == [2]


def test_an_error_inside_the_stream_is_retried(loopback, sse_event, reply, turn, fake_sleep):
    sse = sse_event
    broken = [
        chunk(sse, {"role": "assistant", "content": "par"}),
        sse({"error": {"message": "worker died", "code": 500}}),
    ]
    loopback.add(reply(events=broken), reply(events=text_stream(sse, "whole answer")))

    response = asyncio.run(make_client(loopback.url + "/v1", fake_sleep).complete(SIMPLE_INPUT, turn.context))

    assert response.message.content == "whole answer"
    (retry,) = [e for e in turn.sink.events if isinstance(e, ModelRetry)]
    assert (retry.reason, retry.message) == ("server_error", "error inside the stream: worker died")


def test_server_errors_exhaust_retries_with_growing_backoff(loopback, reply, turn, fake_sleep, recorded_sleeps):
    failing = {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}
    loopback.add(*[reply(500, body=failing) for _ in range(3)])

    with pytest.raises(ModelServerError) as raised:
        asyncio.run(make_client(loopback.url + "/v1", fake_sleep, attempts=3).complete(SIMPLE_INPUT, turn.context))

    assert raised.value.status == 500
    assert raised.value.provider_message == "The server had an error while processing your request."
    assert "gave up after 3 attempts" in raised.value.__notes__
    assert len(loopback.requests) == 3
    policy = RetryPolicy(max_attempts=3)
    assert recorded_sleeps == [policy.delay(1, None, 0.5), policy.delay(2, None, 0.5)]
    assert recorded_sleeps[0] < recorded_sleeps[1]
    retries = [e for e in turn.sink.events if isinstance(e, ModelRetry)]
    assert [(r.attempt, r.reason, r.status) for r in retries] == [(1, "server_error", 500), (2, "server_error", 500)]


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(400, ModelBadRequestError), (401, ModelAuthError), (403, ModelAuthError), (404, ModelBadRequestError)],
)
def test_client_errors_are_typed_and_not_retried(loopback, reply, turn, fake_sleep, status, error_type):
    loopback.add(reply(status, body={"error": {"message": f"rejected with {status}", "type": "invalid_request_error"}}))

    with pytest.raises(error_type) as raised:
        asyncio.run(make_client(loopback.url + "/v1", fake_sleep).complete(SIMPLE_INPUT, turn.context))

    assert raised.value.status == status
    assert raised.value.provider_message == f"rejected with {status}"
    assert len(loopback.requests) == 1


@pytest.mark.parametrize("status", [408, 409])
def test_request_timeout_and_conflict_answers_are_retried(loopback, sse_event, reply, turn, fake_sleep, status):
    loopback.add(reply(status, body={"error": {"message": "try again"}}), reply(events=text_stream(sse_event, "done")))

    response = asyncio.run(make_client(loopback.url + "/v1", fake_sleep).complete(SIMPLE_INPUT, turn.context))

    assert response.message.content == "done"
    assert [e.status for e in turn.sink.events if isinstance(e, ModelRetry)] == [status]


def test_a_silent_server_times_out_and_each_timeout_is_retried(loopback, reply, turn, fake_sleep):
    loopback.add(reply(stall=True), reply(stall=True))

    with pytest.raises(ModelTimeoutError):
        asyncio.run(
            make_client(loopback.url + "/v1", fake_sleep, attempts=2, timeout_s=0.3).complete(
                SIMPLE_INPUT, turn.context
            )
        )

    assert [e.reason for e in turn.sink.events if isinstance(e, ModelRetry)] == ["timeout"]
    assert len(loopback.requests) == 2


def test_an_unreachable_server_is_a_connection_error_after_retries(turn, fake_sleep):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    with pytest.raises(ModelConnectionError):
        asyncio.run(
            make_client(f"http://127.0.0.1:{port}/v1", fake_sleep, attempts=2).complete(SIMPLE_INPUT, turn.context)
        )

    assert [e.reason for e in turn.sink.events if isinstance(e, ModelRetry)] == ["connection_error"]


def test_cancelling_mid_stream_closes_the_in_flight_request(
    loopback, sse_event, reply, fake_sleep, cancel_after_first_delta
):
    sse = sse_event
    loopback.add(
        reply(events=[chunk(sse, {"role": "assistant", "content": ""}), chunk(sse, {"content": "Hel"})], hang=True)
    )

    asyncio.run(cancel_after_first_delta(make_client(loopback.url + "/v1", fake_sleep), SIMPLE_INPUT))

    assert loopback.disconnected.wait(10), "the server never saw the client close the stream"


def test_explicit_proxy_carries_the_request(loopback, sse_event, reply, turn, fake_sleep):
    loopback.add(reply(events=text_stream(sse_event, "via proxy")))
    client = make_client("http://model.invalid/v1", fake_sleep, proxy=loopback.url)

    response = asyncio.run(client.complete(SIMPLE_INPUT, turn.context))

    assert response.message.content == "via proxy"
    assert loopback.requests[0].path == "http://model.invalid/v1/chat/completions"


def test_standard_proxy_variables_are_honoured(loopback, sse_event, reply, turn, fake_sleep, monkeypatch):
    for variable in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HTTP_PROXY", loopback.url)
    monkeypatch.setenv("http_proxy", loopback.url)
    loopback.add(reply(events=text_stream(sse_event, "env proxy")))

    response = asyncio.run(make_client("http://model.invalid/v1", fake_sleep).complete(SIMPLE_INPUT, turn.context))

    assert response.message.content == "env proxy"
    assert loopback.requests[0].path == "http://model.invalid/v1/chat/completions"


def test_missing_sdk_is_an_error_naming_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)

    with pytest.raises(MissingExtraError) as raised:
        ProviderRegistry(BUILTIN_PROVIDERS).create("openai:gpt-4o", environ={"OPENAI_API_KEY": "sk-test"})

    assert "pip install 'sciencediscovery-model[openai]'" in str(raised.value)


def test_a_missing_key_without_base_url_is_a_startup_error_naming_the_variable():
    with pytest.raises(ConfigurationError) as raised:
        ProviderRegistry(BUILTIN_PROVIDERS).create("openai:gpt-4o", environ={})

    assert raised.value.variable == "OPENAI_API_KEY"
