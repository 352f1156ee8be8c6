"""Context fragments and the ContextPlan that carries them.

A fragment is one named piece of model input with provenance (``source_id``), a trust
label, a role deciding where it is rendered, a lifetime, an optional ``max_chars`` cap on
its JSON length and structured top-level ``fields`` (JSON values).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs

from sciencediscovery.runtime_core import Message

from .errors import PlanDefinitionError, ProtectedFragmentError
from .validators import non_empty, optional_count

__all__ = ["ContextFragment", "ContextPlan", "FragmentRole", "Lifetime", "Trust", "json_chars"]


def json_chars(value: Any) -> int:
    """The full compact JSON length of ``value`` (the size measure of fragments and trims)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False))


class Trust(str, enum.Enum):
    """How far a fragment's content is trusted; untrusted content is data, never instructions."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


class FragmentRole(str, enum.Enum):
    """Where a fragment is rendered: system/instructions into the system prompt, the rest into the body."""

    SYSTEM = "system"
    INSTRUCTIONS = "instructions"
    HISTORY = "history"
    DATA = "data"


INSTRUCTION_ROLES = frozenset({FragmentRole.SYSTEM, FragmentRole.INSTRUCTIONS})


class Lifetime(str, enum.Enum):
    """How long the application keeps a fragment; informational for processing."""

    TURN = "turn"
    RUN = "run"
    SESSION = "session"


def _freeze_fields(value: Mapping[str, Any]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise PlanDefinitionError("fields", "must be a mapping with string keys")
    try:
        copied = json.loads(json.dumps(dict(value), ensure_ascii=False))
    except (TypeError, ValueError) as error:
        raise PlanDefinitionError("fields", f"must hold JSON values: {error}") from None
    return MappingProxyType(copied)


@attrs.frozen
class ContextFragment:
    """One piece of model input. Untrusted fragments cannot take a system or instructions role."""

    id: str = attrs.field(validator=non_empty)
    source_id: str = attrs.field(validator=non_empty)
    role: FragmentRole = attrs.field(converter=FragmentRole)
    fields: Mapping[str, Any] = attrs.field(converter=_freeze_fields)
    trust: Trust = attrs.field(default=Trust.TRUSTED, converter=Trust)
    lifetime: Lifetime = attrs.field(default=Lifetime.TURN, converter=Lifetime)
    max_chars: int | None = attrs.field(default=None, validator=optional_count)

    def __attrs_post_init__(self) -> None:
        if self.trust is Trust.UNTRUSTED and self.role in INSTRUCTION_ROLES:
            raise ProtectedFragmentError(self.id, f"untrusted content cannot be {self.role.value}")

    def __hash__(self) -> int:
        return hash((self.identity, json.dumps(dict(self.fields), sort_keys=True)))

    @property
    def identity(self) -> tuple[str, str, FragmentRole, Trust, Lifetime, int | None]:
        """Everything but the fields: what no reduction or application change may alter."""
        return (self.id, self.source_id, self.role, self.trust, self.lifetime, self.max_chars)

    @property
    def chars(self) -> int:
        """The JSON length of the fragment's fields."""
        return json_chars(dict(self.fields))

    def fields_copy(self) -> dict[str, Any]:
        """A deep, mutable copy of the fields (what handlers receive)."""
        copied: dict[str, Any] = json.loads(json.dumps(dict(self.fields), ensure_ascii=False))
        return copied

    def with_fields(self, fields: Mapping[str, Any]) -> ContextFragment:
        """The same fragment with new field values (identity and trust unchanged)."""
        return attrs.evolve(self, fields=fields)


def _fragments(value: Iterable[ContextFragment]) -> tuple[ContextFragment, ...]:
    return tuple(value)


def _unique_ids(instance: ContextPlan, attribute: attrs.Attribute[Any], value: tuple[ContextFragment, ...]) -> None:
    seen: set[str] = set()
    for fragment in value:
        if not isinstance(fragment, ContextFragment):
            raise PlanDefinitionError(attribute.name, f"holds a {type(fragment).__name__}, not a ContextFragment")
        if fragment.id in seen:
            raise PlanDefinitionError(attribute.name, f"fragment id {fragment.id!r} is used twice")
        seen.add(fragment.id)


@attrs.frozen
class ContextPlan:
    """The fragments of one model input, what processing may change, and audit material.

    ``processing_ids`` lists the fragments reduction steps may change; system and
    instruction fragments stay immutable even when listed. ``original_fragments`` are
    trusted originals for diff auditing (never sent to the model) and
    ``mutable_fragment_ids`` the fragments an application may change. ``additional_messages``
    (for example image messages) follow the body; their text counts toward the body budget.
    """

    fragments: tuple[ContextFragment, ...] = attrs.field(converter=_fragments, validator=_unique_ids)
    processing_ids: frozenset[str] = attrs.field(factory=frozenset, converter=frozenset)
    original_fragments: tuple[ContextFragment, ...] = attrs.field(
        default=(), converter=_fragments, validator=_unique_ids
    )
    mutable_fragment_ids: frozenset[str] = attrs.field(factory=frozenset, converter=frozenset)
    additional_messages: tuple[Message, ...] = attrs.field(default=(), converter=tuple)

    def __attrs_post_init__(self) -> None:
        ids = {fragment.id for fragment in self.fragments}
        for name in ("processing_ids", "mutable_fragment_ids"):
            unknown = sorted(getattr(self, name) - ids)
            if unknown:
                raise PlanDefinitionError(name, f"names unknown fragments {unknown}")
        for fragment_id in sorted(self.mutable_fragment_ids):
            if not self.is_mutable(fragment_id):
                raise ProtectedFragmentError(fragment_id, "is immutable and cannot be listed in mutable_fragment_ids")
        for original in self.original_fragments:
            if original.trust is not Trust.TRUSTED:
                raise ProtectedFragmentError(original.id, "original fragments must be trusted")
        for index, message in enumerate(self.additional_messages):
            if not isinstance(message, Message):
                raise PlanDefinitionError(f"additional_messages[{index}]", "must be a Message")

    def fragment(self, fragment_id: str) -> ContextFragment:
        """The fragment with ``fragment_id``; unknown ids raise :class:`PlanDefinitionError`."""
        for fragment in self.fragments:
            if fragment.id == fragment_id:
                return fragment
        raise PlanDefinitionError("fragment_id", f"no fragment {fragment_id!r} in the plan")

    def is_mutable(self, fragment_id: str) -> bool:
        """Whether processing may change the fragment: listed for processing and not system/instructions."""
        return fragment_id in self.processing_ids and self.fragment(fragment_id).role not in INSTRUCTION_ROLES

    def replace(self, fragment: ContextFragment) -> ContextPlan:
        """The plan with the fragment of the same id replaced."""
        self.fragment(fragment.id)
        fragments = tuple(fragment if f.id == fragment.id else f for f in self.fragments)
        return attrs.evolve(self, fragments=fragments)
