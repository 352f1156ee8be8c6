"""Model facts with environment overrides, and client settings from the environment."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.model import ClientSettings, ModelSpecError, find_family, resolve_model_facts
from sciencediscovery.runtime_core import ConfigurationError


@pytest.mark.parametrize(
    ("spec", "family", "window", "output", "encoding"),
    [
        ("openai:gpt-4o-mini", "gpt-4o", 128_000, 16_384, "o200k_base"),
        ("openai:gpt-4.1-nano", "gpt-4.1", 1_047_576, 32_768, "o200k_base"),
        ("openai:gpt-5-mini", "gpt-5", 400_000, 128_000, "o200k_base"),
        ("openai:o3-mini", "o3", 200_000, 100_000, "o200k_base"),
        ("openai:gpt-4-0613", "gpt-4", 8_192, 4_096, "cl100k_base"),
        ("openai:gpt-4-turbo-2024-04-09", "gpt-4-turbo", 128_000, 4_096, "cl100k_base"),
        ("openai:gpt-3.5-turbo", "gpt-3.5-turbo", 16_385, 4_096, "cl100k_base"),
        ("openai:openai/gpt-4o", "gpt-4o", 128_000, 16_384, "o200k_base"),
        ("anthropic:claude-sonnet-4-6", "claude-sonnet-4", 200_000, 64_000, None),
        ("anthropic:claude-3-5-haiku-latest", "claude-3-5-haiku", 200_000, 8_192, None),
        ("openai:llama3.1:8b", None, 32_768, 4_096, None),
        ("scripted:gpt-4o.json", None, 32_768, 4_096, None),
    ],
)
def test_known_families_resolve_by_longest_prefix(spec, family, window, output, encoding):
    facts = resolve_model_facts(spec, {})
    assert (facts.family, facts.context_window, facts.max_output_tokens, facts.encoding) == (
        family,
        window,
        output,
        encoding,
    )
    assert facts.input_limit == window - output
    assert facts.spec == spec


def test_environment_overrides_window_and_reserve():
    facts = resolve_model_facts("openai:gpt-4o", {"MODEL_MAX_TOKENS": "32000", "OUTPUT_RESERVE_TOKENS": "2000"})
    assert (facts.context_window, facts.max_output_tokens, facts.input_limit) == (32_000, 2_000, 30_000)
    assert facts.encoding == "o200k_base"


@pytest.mark.parametrize(
    ("environ", "variable"),
    [
        ({"MODEL_MAX_TOKENS": "0"}, "MODEL_MAX_TOKENS"),
        ({"MODEL_MAX_TOKENS": "lots"}, "MODEL_MAX_TOKENS"),
        ({"OUTPUT_RESERVE_TOKENS": "-5"}, "OUTPUT_RESERVE_TOKENS"),
        ({"OUTPUT_RESERVE_TOKENS": "200000"}, "OUTPUT_RESERVE_TOKENS"),
        ({"MODEL_MAX_TOKENS": "1000"}, "MODEL_MAX_TOKENS"),
    ],
)
def test_bad_overrides_are_startup_errors_naming_the_variable(environ, variable):
    with pytest.raises(ConfigurationError) as raised:
        resolve_model_facts("openai:gpt-4o", environ)
    assert raised.value.variable == variable


@settings(max_examples=50, deadline=None)
@given(window=st.integers(min_value=2, max_value=10**7), data=st.data())
def test_overrides_always_give_a_positive_input_limit(window, data):
    reserve = data.draw(st.integers(min_value=1, max_value=window - 1))
    facts = resolve_model_facts(
        "anthropic:claude-opus-4-1", {"MODEL_MAX_TOKENS": str(window), "OUTPUT_RESERVE_TOKENS": str(reserve)}
    )
    assert facts.input_limit == window - reserve > 0


def test_a_malformed_spec_is_a_spec_error():
    with pytest.raises(ModelSpecError):
        resolve_model_facts("gpt-4o", {})


def test_unknown_names_have_no_family():
    assert find_family("mistral-large") is None


def test_client_settings_from_environment():
    loaded = ClientSettings.from_environ(
        {"MODEL_TIMEOUT_SECONDS": "30", "MODEL_MAX_ATTEMPTS": "5", "MODEL_PROXY": "http://127.0.0.1:3128"}
    )
    assert (loaded.timeout_s, loaded.retry.max_attempts, loaded.proxy) == (30.0, 5, "http://127.0.0.1:3128")
    assert ClientSettings.from_environ({}) == ClientSettings()


@pytest.mark.parametrize(
    ("variable", "value"),
    [("MODEL_TIMEOUT_SECONDS", "0"), ("MODEL_MAX_ATTEMPTS", "many"), ("MODEL_PROXY", "127.0.0.1:3128")],
)
def test_bad_client_settings_name_the_variable(variable, value):
    with pytest.raises(ConfigurationError) as raised:
        ClientSettings.from_environ({variable: value})
    assert raised.value.variable == variable
