"""Specialist definitions as data: a TOML or JSON table per specialist, validated at load.

A :class:`Specialist` is orchestration's :class:`SpecialistDefinition` plus a
structured output contract, so it registers through ``register_specialists``
like any definition and the runner can check the brief against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from sciencediscovery.orchestration import FieldError, SpecialistDefinition
from sciencediscovery.runtime_core.config import DataFileError, read_data_file

from .contracts import OutputContract, contract_from_mapping
from .errors import SpecialistDefinitionError

FIELDS = ("name", "description", "identity", "tools", "max_turns", "model", "contract")
REQUIRED = ("name", "description", "identity", "tools", "max_turns", "contract")


@attrs.frozen
class Specialist(SpecialistDefinition):
    """A specialist whose brief is checked against ``contract`` (``output_contract`` is the text the child reads).

    Build one with :meth:`create` so the two agree.
    """

    contract: OutputContract | None = None

    @classmethod
    def create(
        cls,
        *,
        name: str,
        description: str,
        identity: str,
        tools: Iterable[str],
        max_turns: int,
        contract: OutputContract,
        model: str | None = None,
    ) -> Specialist:
        return cls(
            name=name,
            description=description,
            identity=identity,
            tools=tuple(tools),
            max_turns=max_turns,
            output_contract=contract.describe(),
            model=model,
            contract=contract,
        )


def output_contract(definition: SpecialistDefinition) -> OutputContract | None:
    """The structured contract of ``definition``, if it has one (plain definitions only carry text)."""
    return definition.contract if isinstance(definition, Specialist) else None


def _text(data: Mapping[str, Any], key: str, prefix: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise SpecialistDefinitionError(f"{prefix}.{key}", f"must be a non-empty string, got {value!r}")
    return value.strip()


def specialist_from_mapping(data: Any, *, field: str = "specialist", source: str = "") -> Specialist:
    """One specialist from its table; errors name ``field`` + the bad key (and ``source``, the file)."""
    try:
        return _from_mapping(data, field)
    except SpecialistDefinitionError as error:
        raise SpecialistDefinitionError(error.field, error.detail, source=source) from None


def _from_mapping(data: Any, prefix: str) -> Specialist:
    if not isinstance(data, Mapping):
        raise SpecialistDefinitionError(prefix, f"must be a table of specialist fields, got {type(data).__name__}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise SpecialistDefinitionError(
            f"{prefix}.{unknown[0]}", f"is not a specialist field (known: {', '.join(FIELDS)})"
        )
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise SpecialistDefinitionError(f"{prefix}.{missing[0]}", "is required")
    tools = data["tools"]
    if isinstance(tools, str) or not isinstance(tools, list | tuple):
        raise SpecialistDefinitionError(f"{prefix}.tools", "must be a list of tool-name patterns")
    for index, pattern in enumerate(tools):
        if not isinstance(pattern, str) or not pattern.strip():
            raise SpecialistDefinitionError(f"{prefix}.tools[{index}]", f"must be a non-empty string, got {pattern!r}")
    max_turns = data["max_turns"]
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise SpecialistDefinitionError(f"{prefix}.max_turns", f"must be a positive integer, got {max_turns!r}")
    model = data.get("model")
    if model is not None:
        model = _text(data, "model", prefix)
    try:
        contract = contract_from_mapping(data["contract"])
    except SpecialistDefinitionError as error:
        raise SpecialistDefinitionError(f"{prefix}.{error.field}", error.detail) from None
    try:
        return Specialist.create(
            name=_text(data, "name", prefix),
            description=_text(data, "description", prefix),
            identity=_text(data, "identity", prefix),
            tools=tools,
            max_turns=max_turns,
            contract=contract,
            model=model,
        )
    except FieldError as error:  # orchestration's own checks, should they be stricter than ours
        raise SpecialistDefinitionError(f"{prefix}.{error.field.rsplit('.', 1)[-1]}", error.detail) from None


def specialists_from_mapping(data: Any, *, source: str = "") -> tuple[Specialist, ...]:
    """Every specialist of a document ``{"specialist": [table, ...]}``; names must be unique."""
    if not isinstance(data, Mapping) or set(data) != {"specialist"}:
        keys = sorted(data) if isinstance(data, Mapping) else type(data).__name__
        raise SpecialistDefinitionError("specialist", f"the document must hold only a 'specialist' list, got {keys}")
    tables = data["specialist"]
    if not isinstance(tables, list) or not tables:
        raise SpecialistDefinitionError("specialist", "must be a non-empty list of specialist tables", source=source)
    found: dict[str, Specialist] = {}
    for index, table in enumerate(tables):
        specialist = specialist_from_mapping(table, field=f"specialist[{index}]", source=source)
        if specialist.name in found:
            raise SpecialistDefinitionError(
                f"specialist[{index}].name", f"repeats the specialist name {specialist.name!r}", source=source
            )
        found[specialist.name] = specialist
    return tuple(found.values())


def load_specialists(path: str | Path) -> tuple[Specialist, ...]:
    """Read specialists from a ``.toml`` (``[[specialist]]`` tables) or ``.json`` file; errors name file and field."""
    try:
        data = read_data_file(path)
    except DataFileError as error:
        raise SpecialistDefinitionError(error.field, error.detail, source=str(path)) from None
    try:
        return specialists_from_mapping(data, source=str(path))
    except SpecialistDefinitionError as error:
        raise SpecialistDefinitionError(error.field, error.detail, source=str(path)) from None
