"""Collecting contributor factories and state channels from the plugin host."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .channels import StateChannel
from .contributors import ContextContributorFactory
from .errors import DuplicateIdError


def discover_contributor_factories(
    plugin_manager: Any, settings: Mapping[str, Any]
) -> tuple[ContextContributorFactory, ...]:
    """Every factory registered through ``register_context_contributors``; duplicate ids are an error."""
    factories: list[ContextContributorFactory] = []
    plugin_manager.hook.register_context_contributors(register=factories.append, settings=settings)
    _unique([factory.id for factory in factories], "context contributor factory")
    return tuple(factories)


def discover_state_channels(plugin_manager: Any, settings: Mapping[str, Any]) -> tuple[StateChannel, ...]:
    """Every channel registered through ``register_state_channels``; duplicate names are an error."""
    channels: list[StateChannel] = []
    plugin_manager.hook.register_state_channels(register=channels.append, settings=settings)
    _unique([channel.name for channel in channels], "state channel")
    return tuple(channels)


def _unique(ids: list[str], what: str) -> None:
    duplicates = sorted({value for value in ids if ids.count(value) > 1})
    if duplicates:
        raise DuplicateIdError(f"{what} ids must be unique; duplicated: {', '.join(duplicates)}")
