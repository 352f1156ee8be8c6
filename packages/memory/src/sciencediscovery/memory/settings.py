"""Reading the package's keys from the run's ``settings`` mapping; errors name the key."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.runtime_core import ConfigurationError

from .graph import MemoryClient
from .sqlite_graph import open_graph

DEFAULT_SNAPSHOT_CHARS = 2000


def memory_client(settings: Mapping[str, Any]) -> MemoryClient:
    """``settings["memory_client"]`` (another backend) when given, else the SQLite graph in ``settings["data_dir"]``."""
    client = settings.get("memory_client")
    if client is not None:
        if not isinstance(client, MemoryClient):
            raise ConfigurationError("memory_client", f"must implement MemoryClient; {type(client).__name__} does not")
        return client
    value = settings.get("data_dir")
    if not isinstance(value, str | Path) or not str(value).strip():
        raise ConfigurationError("data_dir", f"sciencediscovery-memory needs a data directory path, got {value!r}")
    return open_graph(Path(value))


def snapshot_chars(settings: Mapping[str, Any]) -> int:
    """``settings["memory_snapshot_chars"]``: the snapshot attachment's character bound (default 2000)."""
    value = settings.get("memory_snapshot_chars", DEFAULT_SNAPSHOT_CHARS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError("memory_snapshot_chars", f"must be a positive integer, got {value!r}")
    return value
