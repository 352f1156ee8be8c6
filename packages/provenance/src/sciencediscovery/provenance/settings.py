"""Reading the package's keys from the run's ``settings`` mapping; errors name the key."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.runtime_core import ConfigurationError

from .review import ReviewRunner
from .store import ProvenanceStore, open_store


def data_dir(settings: Mapping[str, Any]) -> Path:
    """``settings["data_dir"]``: the directory holding ``provenance.sqlite3`` (required)."""
    value = settings.get("data_dir")
    if not isinstance(value, str | Path) or not str(value).strip():
        raise ConfigurationError("data_dir", f"sciencediscovery-provenance needs a data directory path, got {value!r}")
    return Path(value)


def store_for(settings: Mapping[str, Any]) -> ProvenanceStore:
    """The provenance store under ``settings["data_dir"]``."""
    return open_store(data_dir(settings))


def review_enabled(settings: Mapping[str, Any]) -> bool:
    """``settings["review_enabled"]``: review checkpoints run only when this is ``True`` (default ``False``)."""
    value = settings.get("review_enabled", False)
    if not isinstance(value, bool):
        raise ConfigurationError("review_enabled", f"must be true or false, got {value!r}")
    return value


def review_runner(settings: Mapping[str, Any]) -> ReviewRunner | None:
    """``settings["review_runner"]``: the injected :class:`ReviewRunner`, or ``None``."""
    value = settings.get("review_runner")
    if value is not None and not isinstance(value, ReviewRunner):
        raise ConfigurationError(
            "review_runner", f"must implement ReviewRunner.review(); {type(value).__name__} does not"
        )
    return value
