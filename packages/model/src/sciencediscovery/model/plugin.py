"""Entry-point plugin of sciencediscovery-model: the provider hook and the built-in providers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sciencediscovery.runtime_core import hookimpl

from . import hookspecs
from .anthropic_messages import ANTHROPIC_PROVIDER
from .openai_chat import OPENAI_PROVIDER
from .provider import ProviderDefinition
from .scripted import SCRIPTED_PROVIDER

BUILTIN_PROVIDERS = (OPENAI_PROVIDER, ANTHROPIC_PROVIDER, SCRIPTED_PROVIDER)


@hookimpl
def add_hookspecs(plugin_manager: Any) -> None:
    plugin_manager.add_hookspecs(hookspecs)


@hookimpl
def register_model_providers(register: Callable[[ProviderDefinition], None]) -> None:
    for definition in BUILTIN_PROVIDERS:
        register(definition)
