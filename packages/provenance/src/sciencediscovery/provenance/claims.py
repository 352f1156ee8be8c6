"""Claims and the typed evidence they rest on."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .errors import InvalidClaimError


class EvidenceOrigin(str, enum.Enum):
    """Where an evidence item comes from."""

    TOOL_RECORD = "tool_record"
    PAPER = "paper"
    EXECUTION = "execution"
    ARTIFACT = "artifact"
    USER_INPUT = "user_input"


class EvidenceRelation(str, enum.Enum):
    """How an evidence item bears on a claim."""

    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    CONTEXT = "context"


@attrs.frozen
class EvidenceRef:
    """A typed reference to one evidence item.

    ``reference`` is the tool call id (tool_record), a DOI/URL/citation (paper),
    an execution id (execution), an artifact id or SHA-256 (artifact), or a
    quote of what the user said (user_input).
    """

    origin: EvidenceOrigin
    reference: str
    relation: EvidenceRelation
    note: str = ""


@attrs.frozen
class Claim:
    """A statement the agent makes, with the evidence it cites."""

    claim_id: str
    context_id: str
    run_id: str
    call_id: str | None
    statement: str
    evidence: tuple[EvidenceRef, ...]
    created_at: str


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidClaimError(f"{field} must be a non-empty string, got {value!r}")
    return value.strip()


def _member(enum_type: type[enum.Enum], value: Any, field: str) -> Any:
    try:
        return enum_type(value)
    except ValueError:
        allowed = ", ".join(member.value for member in enum_type)
        raise InvalidClaimError(f"{field} must be one of {allowed}; got {value!r}") from None


def parse_statement(value: Any) -> str:
    """The claim statement, validated (field ``statement``)."""
    return _text(value, "statement")


def parse_evidence(items: Sequence[Mapping[str, Any]]) -> tuple[EvidenceRef, ...]:
    """Validate evidence items from tool arguments; errors name ``evidence[i].field``."""
    refs = []
    for index, item in enumerate(items):
        where = f"evidence[{index}]"
        if not isinstance(item, Mapping):
            raise InvalidClaimError(f"{where} must be an object, got {type(item).__name__}")
        note = item.get("note", "")
        if not isinstance(note, str):
            raise InvalidClaimError(f"{where}.note must be a string, got {note!r}")
        refs.append(
            EvidenceRef(
                origin=_member(EvidenceOrigin, item.get("origin"), f"{where}.origin"),
                reference=_text(item.get("reference"), f"{where}.reference"),
                relation=_member(EvidenceRelation, item.get("relation", "supports"), f"{where}.relation"),
                note=note,
            )
        )
    return tuple(refs)
