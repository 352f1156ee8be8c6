"""The provider contract: what a plugin registers to add a model backend."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Protocol, runtime_checkable

import attrs

from sciencediscovery.runtime_core import ModelInput

from .errors import ProviderRegistrationError
from .settings import ClientSettings
from .spec import PROVIDER_NAME, ModelSpec
from .stream import StreamPart


@runtime_checkable
class Provider(Protocol):
    """One model backend bound to one model.

    ``stream`` is an async generator of :data:`StreamPart` values for one call.
    It raises :class:`~sciencediscovery.model.errors.ProviderError` subclasses for
    provider failures and runtime_core's ``ContextOverflowError`` for an overflow;
    the client owns retries, so a provider never retries by itself.
    """

    name: str
    model: str

    def stream(self, model_input: ModelInput) -> AsyncGenerator[StreamPart, None]: ...


@attrs.frozen
class ProviderContext:
    """What a provider factory gets: the parsed spec, client settings and the environment to read keys from."""

    spec: ModelSpec
    settings: ClientSettings
    environ: Mapping[str, str]

    def variable(self, name: str) -> str | None:
        """The trimmed value of environment variable ``name``, or ``None`` when unset or blank."""
        return (self.environ.get(name) or "").strip() or None


def _provider_name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not PROVIDER_NAME.match(value):
        raise ProviderRegistrationError(
            f"ProviderDefinition.name must be lowercase letters, digits, '_', '.' or '-', got {value!r}"
        )


@attrs.frozen
class ProviderDefinition:
    """A provider as registered through ``register_model_providers``: ``create`` builds it for one spec."""

    name: str = attrs.field(validator=_provider_name)
    create: Callable[[ProviderContext], Provider]
    description: str = ""
