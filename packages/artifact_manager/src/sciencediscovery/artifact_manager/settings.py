"""Reading the package's keys from the run's ``settings`` mapping; errors name the key."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.runtime_core import ConfigurationError

DEFAULT_MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024


def data_dir(settings: Mapping[str, Any]) -> Path:
    """``settings["data_dir"]``: where ``artifacts.sqlite3`` and ``artifacts/`` live (required)."""
    value = settings.get("data_dir")
    if not isinstance(value, str | Path) or not str(value).strip():
        raise ConfigurationError(
            "data_dir", f"sciencediscovery-artifact-manager needs a data directory path, got {value!r}"
        )
    return Path(value)


def workspace_dir(settings: Mapping[str, Any]) -> Path:
    """``settings["workspace_dir"]``: ``register_artifact`` paths resolve inside it (default: the current directory)."""
    value = settings.get("workspace_dir", Path.cwd())
    if not isinstance(value, str | Path) or not str(value).strip():
        raise ConfigurationError("workspace_dir", f"must be a directory path, got {value!r}")
    return Path(value).resolve()


def max_download_bytes(settings: Mapping[str, Any]) -> int:
    """``settings["artifact_max_download_bytes"]``: the ceiling for any one download (default 256 MiB)."""
    value = settings.get("artifact_max_download_bytes", DEFAULT_MAX_DOWNLOAD_BYTES)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError("artifact_max_download_bytes", f"must be a positive integer, got {value!r}")
    return value
