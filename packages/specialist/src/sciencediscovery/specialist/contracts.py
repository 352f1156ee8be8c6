"""Output contracts: what a specialist's brief must hold, and the check that lists what it lacks.

A contract is either a list of required Markdown sections or a JSON Schema the
brief (one JSON document) must satisfy. ``check`` returns the validator's
findings; an empty tuple means the brief conforms. Brief text is data: it is
parsed, never followed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs
import jsonschema

from .errors import SpecialistDefinitionError

MAX_FINDINGS = 8
FINDING_CHARS = 240
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_JSON_BLOCK = re.compile(r"^ {0,3}```(?:json)?[ \t]*\n(.*?)\n {0,3}```[ \t]*$", re.DOTALL | re.MULTILINE)


def _title_key(title: str) -> str:
    return " ".join(title.strip().rstrip(":").split()).casefold()


def _clip(text: str) -> str:
    return text if len(text) <= FINDING_CHARS else text[: FINDING_CHARS - 1] + "…"


def _sections(instance: RequiredSections, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]) -> None:
    if not value:
        raise SpecialistDefinitionError("contract.sections", "must name at least one section")
    seen: set[str] = set()
    for index, title in enumerate(value):
        if not isinstance(title, str) or not title.strip() or "\n" in title:
            raise SpecialistDefinitionError(
                f"contract.sections[{index}]", f"must be a one-line non-empty string, got {title!r}"
            )
        if _title_key(title) in seen:
            raise SpecialistDefinitionError(f"contract.sections[{index}]", f"repeats the section {title!r}")
        seen.add(_title_key(title))


def markdown_sections(text: str) -> dict[str, str]:
    """Heading title (case- and space-normalised) to the text under it, up to the next heading of its level
    or above. Headings inside fenced code blocks do not count; a repeated title keeps its first body."""
    lines = text.splitlines()
    headings: list[tuple[int, int, str]] = []
    fenced = False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            headings.append((number, len(match.group(1)), _title_key(match.group(2))))
    found: dict[str, str] = {}
    for index, (number, level, title) in enumerate(headings):
        end = next((n for n, lvl, _ in headings[index + 1 :] if lvl <= level), len(lines))
        found.setdefault(title, "\n".join(lines[number + 1 : end]).strip())
    return found


@attrs.frozen
class RequiredSections:
    """The brief is Markdown holding each of ``sections`` under its own heading, none of them empty."""

    sections: tuple[str, ...] = attrs.field(converter=tuple, validator=_sections)

    def check(self, text: str) -> tuple[str, ...]:
        found = markdown_sections(text)
        findings = []
        for title in self.sections:
            body = found.get(_title_key(title))
            if body is None:
                findings.append(f"missing section {title!r}: add a Markdown heading '## {title}' with its content")
            elif not body:
                findings.append(f"section {title!r} is empty")
        return tuple(findings[:MAX_FINDINGS])

    def describe(self) -> str:
        return "A Markdown brief with these sections, each under its own heading: " + ", ".join(
            f"## {title}" for title in self.sections
        )

    def summary(self) -> str:
        return "sections " + ", ".join(self.sections)

    def to_json(self) -> dict[str, Any]:
        return {"sections": list(self.sections)}


def _schema_copy(value: Any) -> dict[str, Any]:
    """A private JSON copy of ``value``, so the schema cannot change after it was checked."""
    if not isinstance(value, Mapping):
        raise SpecialistDefinitionError("contract.schema", f"must be a JSON Schema object, got {type(value).__name__}")
    try:
        copied: dict[str, Any] = json.loads(json.dumps(value))
    except (TypeError, ValueError) as error:
        raise SpecialistDefinitionError("contract.schema", f"must be plain JSON data: {error}") from None
    return copied


def _schema(instance: JsonSchemaContract, attribute: attrs.Attribute[Mapping[str, Any]], value: Any) -> None:
    try:
        jsonschema.validators.validator_for(value).check_schema(value)
    except jsonschema.SchemaError as error:
        path = "".join(f"[{part!r}]" for part in error.path)
        raise SpecialistDefinitionError(
            f"contract.schema{path}", f"is not a valid JSON Schema: {error.message}"
        ) from None


def parse_json_brief(text: str) -> Any:
    """The brief as JSON: the whole text, else its single fenced JSON block. Raises ``ValueError``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as whole:
        blocks = _JSON_BLOCK.findall(text)
        if len(blocks) != 1:
            raise ValueError(f"the brief is not one JSON document ({whole.msg} at line {whole.lineno})") from None
        try:
            return json.loads(blocks[0])
        except json.JSONDecodeError as block:
            raise ValueError(f"the brief's JSON block does not parse ({block.msg} at line {block.lineno})") from None


@attrs.frozen
class JsonSchemaContract:
    """The brief is one JSON document (bare or in a single fenced block) valid against ``schema``."""

    schema: Mapping[str, Any] = attrs.field(converter=_schema_copy, validator=_schema)

    def check(self, text: str) -> tuple[str, ...]:
        try:
            document = parse_json_brief(text.strip())
        except ValueError as error:
            return (str(error),)
        validator = jsonschema.validators.validator_for(self.schema)(self.schema)
        errors = sorted(validator.iter_errors(document), key=lambda e: [str(part) for part in e.absolute_path])
        return tuple(
            _clip(f"{'/'.join(str(part) for part in error.absolute_path) or '(root)'}: {error.message}")
            for error in errors[:MAX_FINDINGS]
        )

    def describe(self) -> str:
        return "One JSON document, and nothing else, valid against this JSON Schema: " + json.dumps(
            self.schema, sort_keys=True
        )

    def summary(self) -> str:
        return "one JSON document matching the specialist's JSON Schema"

    def to_json(self) -> dict[str, Any]:
        return {"schema": self.schema}


OutputContract = RequiredSections | JsonSchemaContract


def contract_from_mapping(data: Any) -> OutputContract:
    """``{"sections": [...]}`` or ``{"schema": {...}}``; errors name the ``contract.*`` field."""
    if not isinstance(data, Mapping):
        raise SpecialistDefinitionError("contract", f"must be a table with 'sections' or 'schema', got {data!r}")
    unknown = sorted(set(data) - {"sections", "schema"})
    if unknown:
        raise SpecialistDefinitionError(f"contract.{unknown[0]}", "is not a contract field (known: schema, sections)")
    if ("sections" in data) == ("schema" in data):
        raise SpecialistDefinitionError("contract", "needs exactly one of 'sections' or 'schema'")
    if "sections" in data:
        sections = data["sections"]
        if isinstance(sections, str) or not isinstance(sections, list | tuple):
            raise SpecialistDefinitionError("contract.sections", "must be a list of section titles")
        return RequiredSections(sections)
    return JsonSchemaContract(data["schema"])
