"""Hooks owned by the context package."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import hookspec

from .channels import StateChannel
from .contributors import ContextContributorFactory


@hookspec
def register_context_contributors(
    register: Callable[[ContextContributorFactory], None], settings: Mapping[str, Any]
) -> None:
    """Register context contributor factories by calling ``register(factory)`` once per factory.

    Factory ids must be unique across all plugins. Each run creates its
    contributors from the factories (``factory.create(scope)``) and freezes
    its registry before the first model turn.
    """


@hookspec
def register_state_channels(register: Callable[[StateChannel], None], settings: Mapping[str, Any]) -> None:
    """Register run-scoped state channels by calling ``register(channel)`` once per channel.

    Channel names must be unique. Each channel's pure ``apply`` reducer sees
    every successful tool result in the model's declared order; ``render``
    gives the JSON projected to the model as ``data_only`` runtime data.
    """
