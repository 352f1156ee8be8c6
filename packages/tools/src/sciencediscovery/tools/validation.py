"""Argument validation against a tool's JSON Schema, with messages a model can act on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator

from .errors import InvalidToolError

MAX_REPORTED_ERRORS = 5


def compile_schema(tool_name: str, schema: Mapping[str, Any]) -> Validator:
    """A validator for ``schema`` (its ``$schema`` dialect, Draft 2020-12 when unset); bad schemas name the tool."""
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except SchemaError as error:
        raise InvalidToolError(f"tool {tool_name!r}: parameters is not a valid JSON Schema: {error.message}") from error
    if schema.get("type", "object") != "object":
        raise InvalidToolError(
            f"tool {tool_name!r}: parameters must describe an object, got type {schema.get('type')!r}"
        )
    return validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)


def _location(error: ValidationError) -> str:
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
    return f"arguments{path}"


def argument_errors(validator: Validator, arguments: Mapping[str, Any]) -> list[str]:
    """One line per violation, naming the field and what was expected; empty when the arguments are valid."""
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    lines = [f"{_location(error)}: {error.message}" for error in errors[:MAX_REPORTED_ERRORS]]
    if len(errors) > MAX_REPORTED_ERRORS:
        lines.append(f"... and {len(errors) - MAX_REPORTED_ERRORS} more")
    return lines
