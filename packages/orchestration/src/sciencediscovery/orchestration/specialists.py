"""Specialist definitions: named subagent presets that plugins register through ``register_specialists``."""

from __future__ import annotations

import attrs

from .errors import ProfileError
from .profiles import AgentProfile, string_tuple


def _text(instance: SpecialistDefinition, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ProfileError(f"specialist.{attribute.name}", f"must be a non-empty string, got {value!r}")


def _positive(instance: SpecialistDefinition, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ProfileError(f"specialist {instance.name!r}.max_turns", f"must be a positive integer, got {value!r}")


@attrs.frozen
class SpecialistDefinition:
    """A subagent preset: identity, governed tool subset (glob patterns), turn budget, model spec and
    the output contract its brief must follow."""

    name: str = attrs.field(validator=_text)
    description: str = attrs.field(validator=_text)
    identity: str = attrs.field(validator=_text)
    tools: tuple[str, ...] = attrs.field(converter=string_tuple)
    max_turns: int = attrs.field(validator=_positive)
    output_contract: str = attrs.field(validator=_text)
    model: str | None = None

    def profile(self, base: AgentProfile) -> AgentProfile:
        """``base`` (the subagent profile) narrowed to this specialist; its denials still apply."""
        return attrs.evolve(
            base,
            identity=self.identity,
            tools=self.tools,
            max_turns=min(self.max_turns, base.max_turns),
            model=self.model or base.model,
        )
