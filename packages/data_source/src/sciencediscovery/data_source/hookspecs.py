"""Hooks owned by the data_source package."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import hookspec

from .search import SearchProvider


@hookspec
def register_search_providers(register: Callable[[SearchProvider], None], settings: Mapping[str, Any]) -> None:
    """Register web search providers by calling ``register(provider)`` once per provider.

    A provider has a ``name`` (1-32 letters, digits, ``_`` or ``-``), a ``description`` and
    ``async search(query, limit) -> Sequence[SearchHit]``. ``settings`` is the run's
    configuration: read keys (API keys by secret name) from it, never hard-code them.
    No provider is built in; without one there is no ``web_search`` tool.
    """
