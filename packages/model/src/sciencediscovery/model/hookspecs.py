"""Hooks owned by the model package."""

from __future__ import annotations

from collections.abc import Callable

from sciencediscovery.runtime_core import hookspec

from .provider import ProviderDefinition


@hookspec
def register_model_providers(register: Callable[[ProviderDefinition], None]) -> None:
    """Register model providers by calling ``register(ProviderDefinition(name, create))`` once per provider.

    A spec string ``<name>:<rest>`` then selects the provider; ``create`` receives a
    :class:`~sciencediscovery.model.provider.ProviderContext` holding the parsed spec,
    the client settings and the environment. Names must be unique.
    """
