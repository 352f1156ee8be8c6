"""The tools package's configuration, read from the run's settings and validated at startup."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from sciencediscovery.runtime_core import ConfigurationError
from sciencediscovery.runtime_core.config import positive_int

PREFIX = "SCIENCE_AGENT_TOOL_"
TIMEOUT = "SCIENCE_AGENT_TOOL_TIMEOUT_SECONDS"
STORE_THRESHOLD = "SCIENCE_AGENT_TOOL_OUTPUT_STORE_CHARS"
MAX_INLINE = "SCIENCE_AGENT_TOOL_OUTPUT_MAX_INLINE_CHARS"
SLICE_CHARS = "SCIENCE_AGENT_TOOL_OUTPUT_SLICE_CHARS"
OUTPUT_DIR = "SCIENCE_AGENT_TOOL_OUTPUT_DIR"
IDENTICAL_CALLS = "SCIENCE_AGENT_TOOL_IDENTICAL_CALL_LIMIT"
CALL_BUDGET = "SCIENCE_AGENT_TOOL_CALL_BUDGET"

OUTPUT_STORE_SETTING = "sciencediscovery.tools.output_store"
"""Settings key under which :func:`~sciencediscovery.tools.compose.build_tools` hands hooks the run's output store."""


@attrs.frozen
class ToolSettings:
    """Dispatcher policy. Outputs longer than ``store_threshold_chars`` are stored with a ref; longer than
    ``max_inline_chars`` they become an ``oversize`` result showing head and tail only."""

    timeout_s: int = 120
    store_threshold_chars: int = 20_000
    max_inline_chars: int = 60_000
    slice_chars: int = 8_000
    identical_call_limit: int = 3
    call_budget: int | None = None
    output_dir: str | None = None

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ToolSettings:
        """Read the ``SCIENCE_AGENT_TOOL_*`` values (unset keeps the default); errors name the variable."""
        text = {key: str(value) for key, value in settings.items() if key.startswith(PREFIX)}
        defaults = cls()
        values = cls(
            timeout_s=positive_int(text, TIMEOUT, defaults.timeout_s) or defaults.timeout_s,
            store_threshold_chars=positive_int(text, STORE_THRESHOLD, defaults.store_threshold_chars)
            or defaults.store_threshold_chars,
            max_inline_chars=positive_int(text, MAX_INLINE, defaults.max_inline_chars) or defaults.max_inline_chars,
            slice_chars=positive_int(text, SLICE_CHARS, defaults.slice_chars) or defaults.slice_chars,
            identical_call_limit=positive_int(text, IDENTICAL_CALLS, defaults.identical_call_limit)
            or defaults.identical_call_limit,
            call_budget=positive_int(text, CALL_BUDGET),
            output_dir=(str(settings[OUTPUT_DIR]).strip() or None) if OUTPUT_DIR in settings else None,
        )
        if values.slice_chars > values.store_threshold_chars:
            raise ConfigurationError(
                SLICE_CHARS,
                f"must not exceed {STORE_THRESHOLD} ({values.store_threshold_chars}), got {values.slice_chars}",
            )
        if values.store_threshold_chars > values.max_inline_chars:
            raise ConfigurationError(
                STORE_THRESHOLD,
                f"must not exceed {MAX_INLINE} ({values.max_inline_chars}), got {values.store_threshold_chars}",
            )
        return values
