"""The provider registry: collects provider definitions from plugins and builds providers from spec strings."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ProviderRegistrationError, UnknownProviderError
from .provider import Provider, ProviderContext, ProviderDefinition
from .settings import ClientSettings
from .spec import ModelSpec, parse_model_spec


class ProviderRegistry:
    """Provider definitions by name."""

    def __init__(self, definitions: Iterable[ProviderDefinition] = ()) -> None:
        self._definitions: dict[str, ProviderDefinition] = {}
        for definition in definitions:
            self.add(definition)

    @classmethod
    def from_plugin_manager(cls, plugin_manager: Any) -> ProviderRegistry:
        """Collect every provider registered through the ``register_model_providers`` hook."""
        registry = cls()
        plugin_manager.hook.register_model_providers(register=registry.add)
        return registry

    def add(self, definition: ProviderDefinition) -> None:
        if not isinstance(definition, ProviderDefinition):
            raise ProviderRegistrationError(f"register() expects a ProviderDefinition, got {type(definition).__name__}")
        if definition.name in self._definitions:
            raise ProviderRegistrationError(f"model provider {definition.name!r} is registered twice")
        self._definitions[definition.name] = definition

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._definitions))

    def parse(self, spec: str) -> ModelSpec:
        """Parse ``spec`` and check that its provider is registered."""
        parsed = parse_model_spec(spec, self.names)
        if parsed.provider not in self._definitions:
            raise UnknownProviderError(spec, f"no provider named {parsed.provider!r} is registered", self.names)
        return parsed

    def create(
        self, spec: str, *, settings: ClientSettings | None = None, environ: Mapping[str, str] | None = None
    ) -> Provider:
        """Build the provider for ``spec`` (``<provider>:<rest>``)."""
        parsed = self.parse(spec)
        env = os.environ if environ is None else environ
        context = ProviderContext(spec=parsed, settings=settings or ClientSettings.from_environ(env), environ=env)
        provider = self._definitions[parsed.provider].create(context)
        if not isinstance(provider, Provider):
            raise ProviderRegistrationError(
                f"model provider {parsed.provider!r} built a {type(provider).__name__}, "
                "which lacks the Provider attributes name, model and stream()"
            )
        return provider
