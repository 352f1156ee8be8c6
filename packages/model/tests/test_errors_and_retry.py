"""Overflow recognition, retry timing and Retry-After parsing."""

from __future__ import annotations

import email.utils

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.model import RetryPolicy, is_context_overflow, parse_retry_after


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        "prompt is too long: 208310 tokens > 200000 maximum",
        "the request exceeds the available context size, try increasing it",
        "Input exceeds the model's context window",
        "litellm.ContextWindowExceededError: ContextWindowExceededError: OpenAIException",
        "Please reduce the length of the messages or completion.",
        "input is too long for requested model",
    ],
)
def test_overflow_texts_of_providers_and_compatible_servers_are_recognized(message):
    assert is_context_overflow(message)


@pytest.mark.parametrize(
    "message",
    [
        "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.",
        "Invalid value for 'temperature'",
        "model 'llama3' not found",
        "Overloaded",
    ],
)
def test_other_errors_are_not_overflows(message):
    assert not is_context_overflow(message)


def test_overflow_codes_are_recognized_whatever_the_message():
    assert is_context_overflow("bad request", None, "context_length_exceeded")
    assert is_context_overflow("bad request", "exceed_context_size_error")


@settings(max_examples=80, deadline=None)
@given(
    attempt=st.integers(min_value=1, max_value=30),
    random=st.floats(min_value=0, max_value=1, exclude_max=True),
    base=st.floats(min_value=0.01, max_value=5),
    cap=st.floats(min_value=0.01, max_value=120),
    jitter=st.floats(min_value=0, max_value=1),
)
def test_backoff_stays_within_its_jittered_exponential_bound(attempt, random, base, cap, jitter):
    policy = RetryPolicy(max_attempts=5, base_delay_s=base, max_delay_s=cap, jitter=jitter)
    bound = min(cap, base * 2 ** (attempt - 1))

    delay = policy.delay(attempt, None, random)

    assert bound * (1 - jitter) - 1e-9 <= delay <= bound + 1e-9


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=0, max_value=1000), st.integers(min_value=1, max_value=5))
def test_retry_after_is_honoured_up_to_the_cap(retry_after, attempt):
    policy = RetryPolicy(max_retry_after_s=60)
    assert policy.delay(attempt, retry_after, 0.7) == min(retry_after, 60)


def test_retry_after_headers_in_seconds_milliseconds_and_http_dates():
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"Retry-After": email.utils.formatdate(1_000_030, usegmt=True)}, now=1_000_000) == 30.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    ("field", "value"), [("max_attempts", 0), ("base_delay_s", 0), ("jitter", 1.5), ("max_delay_s", float("inf"))]
)
def test_invalid_retry_policies_name_the_field(field, value):
    with pytest.raises(ValueError, match=f"RetryPolicy.{field}"):
        RetryPolicy(**{field: value})
