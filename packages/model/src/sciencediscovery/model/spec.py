"""Model spec strings: ``<provider>:<rest>``, e.g. ``openai:gpt-4o`` or ``scripted:run.json``."""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

from .errors import ModelSpecError

PROVIDER_NAME = re.compile(r"^[a-z][a-z0-9_.-]*$")


@attrs.frozen
class ModelSpec:
    """A parsed spec: the provider's registered name and what follows the first colon."""

    provider: str
    target: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.target}"


def parse_model_spec(spec: str, available: Iterable[str] = ()) -> ModelSpec:
    """Split ``spec`` at its first colon; a malformed spec raises :class:`ModelSpecError` listing ``available``."""
    if not isinstance(spec, str):
        raise ModelSpecError(repr(spec), "a model spec must be a string like 'openai:gpt-4o'", available)
    provider, colon, target = spec.strip().partition(":")
    if not colon:
        raise ModelSpecError(spec, "expected '<provider>:<model or path>', e.g. 'openai:gpt-4o'", available)
    if not PROVIDER_NAME.match(provider):
        raise ModelSpecError(
            spec, f"provider name {provider!r} must be lowercase letters, digits, '_', '.' or '-'", available
        )
    if not target.strip():
        raise ModelSpecError(spec, f"nothing follows '{provider}:' (expected a model name or path)", available)
    return ModelSpec(provider=provider, target=target.strip())
