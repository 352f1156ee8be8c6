"""Validated configuration of context assembly; every error names its variable.

Variables (all token and count values are positive integers):

``SCIENCE_AGENT_CONTEXT_MODE``
    ``dynamic`` (default) | ``shadow`` | ``legacy``, trimmed and case-insensitive.
``SCIENCE_AGENT_CONTEXT_WINDOW_TOKENS``
    optional cap on the input window.
``MODEL_MAX_TOKENS`` / ``OUTPUT_RESERVE_TOKENS``
    the model's window (default 128000) and the part kept for output (default 8192).
``SCIENCE_AGENT_CONTEXT_PRESSURE_PERCENT``
    history compaction starts when the estimated input reaches this percentage
    of the effective limit (1-100, default 80).
``SCIENCE_AGENT_CONTEXT_PROMPT_TOKENS``
    system-prompt budget (default a quarter of the effective limit).
``SCIENCE_AGENT_CONTEXT_DATA_TOKENS``
    budget of contributed messages, attachments and runtime projections
    (default a tenth of the effective limit).
``SCIENCE_AGENT_CONTEXT_MAX_MESSAGES``
    compatibility message-count bound of canonical history (default 1000).
``SCIENCE_AGENT_CONTEXT_SUMMARY_ATTEMPTS``
    checkpoint summary attempts per compaction (default 2).
``SCIENCE_AGENT_CONTEXT_TRACE`` / ``SCIENCE_AGENT_CONTEXT_TRACE_DIR``
    per-turn trace files, by default under ``<data-dir>/context-traces``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import attrs

from sciencediscovery.runtime_core import ConfigurationError
from sciencediscovery.runtime_core.config import choice, flag, positive_int

MODES = ("dynamic", "shadow", "legacy")
MODE_VARIABLE = "SCIENCE_AGENT_CONTEXT_MODE"
WINDOW_VARIABLE = "SCIENCE_AGENT_CONTEXT_WINDOW_TOKENS"
MODEL_MAX_VARIABLE = "MODEL_MAX_TOKENS"
OUTPUT_RESERVE_VARIABLE = "OUTPUT_RESERVE_TOKENS"
PRESSURE_VARIABLE = "SCIENCE_AGENT_CONTEXT_PRESSURE_PERCENT"
PROMPT_VARIABLE = "SCIENCE_AGENT_CONTEXT_PROMPT_TOKENS"
DATA_VARIABLE = "SCIENCE_AGENT_CONTEXT_DATA_TOKENS"
MAX_MESSAGES_VARIABLE = "SCIENCE_AGENT_CONTEXT_MAX_MESSAGES"
SUMMARY_ATTEMPTS_VARIABLE = "SCIENCE_AGENT_CONTEXT_SUMMARY_ATTEMPTS"
TRACE_VARIABLE = "SCIENCE_AGENT_CONTEXT_TRACE"
TRACE_DIR_VARIABLE = "SCIENCE_AGENT_CONTEXT_TRACE_DIR"


@attrs.frozen
class ContextBudget:
    """Resolved token budgets of one model turn; everything shares ``limit``."""

    limit: int
    prompt: int
    data: int
    pressure: int
    model_max_tokens: int
    output_reserve_tokens: int
    window_tokens: int | None

    def as_json(self) -> dict[str, int | None]:
        return {
            "effectiveInputLimit": self.limit,
            "promptBudget": self.prompt,
            "dataBudget": self.data,
            "pressureThreshold": self.pressure,
            "modelMaxTokens": self.model_max_tokens,
            "outputReserveTokens": self.output_reserve_tokens,
            "windowTokens": self.window_tokens,
        }


@attrs.frozen
class ContextSettings:
    """Every configured value of context assembly, validated."""

    mode: str = "dynamic"
    model_max_tokens: int = 128_000
    output_reserve_tokens: int = 8_192
    window_tokens: int | None = None
    pressure_percent: int = 80
    prompt_tokens: int | None = None
    data_tokens: int | None = None
    max_messages: int = 1_000
    summary_attempts: int = 2
    trace: bool = False
    trace_dir: Path | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], *, data_dir: Path | None = None) -> ContextSettings:
        """Read and validate the variables; ``data_dir`` gives the default trace folder."""
        model_max = positive_int(environ, MODEL_MAX_VARIABLE, 128_000) or 128_000
        reserve = positive_int(environ, OUTPUT_RESERVE_VARIABLE, 8_192) or 8_192
        if reserve >= model_max:
            raise ConfigurationError(
                OUTPUT_RESERVE_VARIABLE, f"must be smaller than {MODEL_MAX_VARIABLE} ({model_max}), got {reserve}"
            )
        pressure = positive_int(environ, PRESSURE_VARIABLE, 80) or 80
        if pressure > 100:
            raise ConfigurationError(PRESSURE_VARIABLE, f"must be a percentage from 1 to 100, got {pressure}")
        trace = flag(environ, TRACE_VARIABLE)
        raw_dir = (environ.get(TRACE_DIR_VARIABLE) or "").strip()
        trace_dir = Path(raw_dir) if raw_dir else (data_dir / "context-traces" if data_dir else None)
        if trace and trace_dir is None:
            raise ConfigurationError(
                TRACE_DIR_VARIABLE, "must be set when tracing is on and no data directory is known"
            )
        return cls(
            mode=choice(environ, MODE_VARIABLE, MODES, "dynamic"),
            model_max_tokens=model_max,
            output_reserve_tokens=reserve,
            window_tokens=positive_int(environ, WINDOW_VARIABLE),
            pressure_percent=pressure,
            prompt_tokens=positive_int(environ, PROMPT_VARIABLE),
            data_tokens=positive_int(environ, DATA_VARIABLE),
            max_messages=positive_int(environ, MAX_MESSAGES_VARIABLE, 1_000) or 1_000,
            summary_attempts=positive_int(environ, SUMMARY_ATTEMPTS_VARIABLE, 2) or 2,
            trace=trace,
            trace_dir=trace_dir,
        )

    def budget(self) -> ContextBudget:
        """The effective limit: min(window when set, model max - output reserve), and its shares."""
        available = self.model_max_tokens - self.output_reserve_tokens
        limit = min(self.window_tokens, available) if self.window_tokens else available
        return ContextBudget(
            limit=limit,
            prompt=min(self.prompt_tokens or limit // 4, limit),
            data=min(self.data_tokens or limit // 10, limit),
            pressure=max(1, limit * self.pressure_percent // 100),
            model_max_tokens=self.model_max_tokens,
            output_reserve_tokens=self.output_reserve_tokens,
            window_tokens=self.window_tokens,
        )
