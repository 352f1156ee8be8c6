"""attrs validators shared by plan values; each raises :class:`PlanDefinitionError` naming the field."""

from __future__ import annotations

from typing import Any

import attrs

from .errors import PlanDefinitionError

__all__ = ["check_timeout", "count", "non_empty", "optional_count", "timeout"]


def non_empty(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A non-empty string."""
    if not isinstance(value, str) or not value:
        raise PlanDefinitionError(attribute.name, f"must be a non-empty string, got {value!r}")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def count(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A non-negative integer (0 is a value, not "unset")."""
    if not _is_count(value):
        raise PlanDefinitionError(attribute.name, f"must be a non-negative integer, got {value!r}")


def optional_count(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None or a non-negative integer."""
    if value is not None and not _is_count(value):
        raise PlanDefinitionError(attribute.name, f"must be a non-negative integer or None, got {value!r}")


def check_timeout(value: Any, field: str) -> None:
    """None or a positive number of seconds."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
        raise PlanDefinitionError(field, f"must be a positive number of seconds or None, got {value!r}")


def timeout(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    """attrs form of :func:`check_timeout`."""
    check_timeout(value, attribute.name)
