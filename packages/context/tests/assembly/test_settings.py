"""Configuration: modes, budgets and trace settings; every error names its variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciencediscovery.context import ContextSettings
from sciencediscovery.runtime_core import ConfigurationError


@pytest.mark.parametrize(
    ("raw", "mode"),
    [(None, "dynamic"), ("", "dynamic"), (" Shadow ", "shadow"), ("LEGACY", "legacy"), ("dynamic", "dynamic")],
)
def test_modes_are_parsed_trimmed_and_case_insensitive(raw: str | None, mode: str) -> None:
    environ = {} if raw is None else {"SCIENCE_AGENT_CONTEXT_MODE": raw}
    assert ContextSettings.from_environ(environ).mode == mode


def test_an_unknown_mode_is_a_startup_error_naming_the_allowed_values() -> None:
    with pytest.raises(ConfigurationError) as raised:
        ContextSettings.from_environ({"SCIENCE_AGENT_CONTEXT_MODE": "fast"})
    assert raised.value.variable == "SCIENCE_AGENT_CONTEXT_MODE"
    assert "dynamic, shadow, legacy" in str(raised.value)


@pytest.mark.parametrize(
    "variable",
    [
        "SCIENCE_AGENT_CONTEXT_WINDOW_TOKENS",
        "MODEL_MAX_TOKENS",
        "OUTPUT_RESERVE_TOKENS",
        "SCIENCE_AGENT_CONTEXT_PRESSURE_PERCENT",
        "SCIENCE_AGENT_CONTEXT_PROMPT_TOKENS",
        "SCIENCE_AGENT_CONTEXT_DATA_TOKENS",
        "SCIENCE_AGENT_CONTEXT_MAX_MESSAGES",
        "SCIENCE_AGENT_CONTEXT_SUMMARY_ATTEMPTS",
    ],
)
@pytest.mark.parametrize("value", ["0", "-5", "12k", "1.5"])
def test_budget_values_must_be_positive_integers(variable: str, value: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        ContextSettings.from_environ({variable: value})
    assert raised.value.variable == variable


def test_effective_limit_is_the_smaller_of_window_and_model_minus_reserve() -> None:
    base = {"MODEL_MAX_TOKENS": "200000", "OUTPUT_RESERVE_TOKENS": "10000"}
    assert ContextSettings.from_environ(base).budget().limit == 190_000
    assert (
        ContextSettings.from_environ({**base, "SCIENCE_AGENT_CONTEXT_WINDOW_TOKENS": "128000"}).budget().limit
        == 128_000
    )
    assert (
        ContextSettings.from_environ({**base, "SCIENCE_AGENT_CONTEXT_WINDOW_TOKENS": "500000"}).budget().limit
        == 190_000
    )
    budget = ContextSettings.from_environ({**base, "SCIENCE_AGENT_CONTEXT_PRESSURE_PERCENT": "50"}).budget()
    assert budget.pressure == 95_000
    assert budget.prompt <= budget.limit and budget.data <= budget.limit


def test_reserve_must_leave_room_and_pressure_is_a_percentage() -> None:
    with pytest.raises(ConfigurationError) as raised:
        ContextSettings.from_environ({"MODEL_MAX_TOKENS": "8000", "OUTPUT_RESERVE_TOKENS": "8000"})
    assert raised.value.variable == "OUTPUT_RESERVE_TOKENS"
    with pytest.raises(ConfigurationError) as raised:
        ContextSettings.from_environ({"SCIENCE_AGENT_CONTEXT_PRESSURE_PERCENT": "101"})
    assert raised.value.variable == "SCIENCE_AGENT_CONTEXT_PRESSURE_PERCENT"


def test_trace_settings(tmp_path: Path) -> None:
    assert ContextSettings.from_environ({}).trace is False
    on = ContextSettings.from_environ({"SCIENCE_AGENT_CONTEXT_TRACE": "1"}, data_dir=tmp_path)
    assert on.trace and on.trace_dir == tmp_path / "context-traces"
    explicit = ContextSettings.from_environ(
        {"SCIENCE_AGENT_CONTEXT_TRACE": "1", "SCIENCE_AGENT_CONTEXT_TRACE_DIR": str(tmp_path / "t")}, data_dir=tmp_path
    )
    assert explicit.trace_dir == tmp_path / "t"
    with pytest.raises(ConfigurationError) as raised:
        ContextSettings.from_environ({"SCIENCE_AGENT_CONTEXT_TRACE": "1"})
    assert raised.value.variable == "SCIENCE_AGENT_CONTEXT_TRACE_DIR"
    with pytest.raises(ConfigurationError) as raised:
        ContextSettings.from_environ({"SCIENCE_AGENT_CONTEXT_TRACE": "maybe"})
    assert raised.value.variable == "SCIENCE_AGENT_CONTEXT_TRACE"
