"""Configuration of the data_source package, read from the run's settings (errors name the variable)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from sciencediscovery.governance.network import NetworkPolicy
from sciencediscovery.runtime_core import ConfigurationError
from sciencediscovery.runtime_core.config import positive_int

MAX_BYTES_VARIABLE = "SCIENCE_AGENT_WEB_MAX_BYTES"
TIMEOUT_VARIABLE = "SCIENCE_AGENT_WEB_TIMEOUT_SECONDS"
REDIRECTS_VARIABLE = "SCIENCE_AGENT_WEB_MAX_REDIRECTS"
CACHE_VARIABLE = "SCIENCE_AGENT_WEB_CACHE_DIR"
PINS_VARIABLE = "SCIENCE_AGENT_MCP_PINS_FILE"
NETWORK_POLICY_SETTING = "network_policy"
BROKER_SETTING = "mcp_broker"
DEFAULT_MAX_BYTES = 5_000_000
DEFAULT_TIMEOUT_S = 30
DEFAULT_MAX_REDIRECTS = 5


def network_policy_from_settings(settings: Mapping[str, Any]) -> NetworkPolicy:
    """``settings["network_policy"]`` (a NetworkPolicy or its config mapping); deny-all when absent,
    the same default as governance's permission epoch, so one configured policy governs both."""
    value = settings.get(NETWORK_POLICY_SETTING)
    if value is None:
        return NetworkPolicy.deny_all()
    if isinstance(value, NetworkPolicy):
        return value
    if isinstance(value, Mapping):
        return NetworkPolicy.from_config(value)
    raise ConfigurationError(
        f"settings: {NETWORK_POLICY_SETTING}", f"must be a NetworkPolicy or a mapping, got {value!r}"
    )


def _values(settings: Mapping[str, Any], environ: Mapping[str, str] | None) -> dict[str, str]:
    """Settings keys override the environment; both hold the same variable names."""
    base = dict(os.environ if environ is None else environ)
    base.update({key: str(value) for key, value in settings.items() if key.startswith("SCIENCE_AGENT_")})
    return base


def _data_path(settings: Mapping[str, Any], *parts: str) -> Path | None:
    data_dir = settings.get("data_dir")
    return Path(data_dir, "data_source", *parts) if data_dir else None


@attrs.frozen
class WebSettings:
    """Limits of ``web_fetch``; ``cache_dir`` None disables the HTTP cache."""

    max_bytes: int = DEFAULT_MAX_BYTES
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    cache_dir: Path | None = None

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> WebSettings:
        values = _values(settings, environ)
        cache = values.get(CACHE_VARIABLE, "").strip()
        return cls(
            max_bytes=positive_int(values, MAX_BYTES_VARIABLE, DEFAULT_MAX_BYTES) or DEFAULT_MAX_BYTES,
            timeout_s=float(positive_int(values, TIMEOUT_VARIABLE, DEFAULT_TIMEOUT_S) or DEFAULT_TIMEOUT_S),
            max_redirects=positive_int(values, REDIRECTS_VARIABLE, DEFAULT_MAX_REDIRECTS) or DEFAULT_MAX_REDIRECTS,
            cache_dir=Path(cache) if cache else _data_path(settings, "http-cache"),
        )


def pins_path(settings: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Path | None:
    """Where approved MCP tool lists are kept: ``SCIENCE_AGENT_MCP_PINS_FILE``, else under ``data_dir``."""
    configured = _values(settings, environ).get(PINS_VARIABLE, "").strip()
    return Path(configured) if configured else _data_path(settings, "mcp-approved-tools.json")
