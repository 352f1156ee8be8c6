"""Loading permission rules from config data, JSON or TOML files, and environment variables.

Every rule is validated at load; a malformed rule raises :class:`~.errors.RuleError`
naming the rule and where it came from, and is never skipped.

Environment variables (names follow the ``SCIENCE_AGENT_`` convention):

``SCIENCE_AGENT_PERMISSIONS_FILE``
    a ``.json`` or ``.toml`` file holding ``default``, ``allow``, ``ask``, ``deny``
    (top level, or under a ``permissions`` table).
``SCIENCE_AGENT_PERMISSION_ALLOW`` / ``_ASK`` / ``_DENY``
    extra rules: a JSON array, or rules separated by newlines or ``;``.
``SCIENCE_AGENT_PERMISSION_DEFAULT``
    ``allow``, ``ask`` or ``deny`` for unmatched calls (default ``ask``).
``SCIENCE_AGENT_PERMISSION_TIMEOUT_S``
    seconds a permission request waits for a decision before it resolves as deny (default 300).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.runtime_core.config import DataFileError, choice, positive_int, read_data_file

from .errors import PermissionConfigError
from .rules import Effect, RuleSet

FILE_VARIABLE = "SCIENCE_AGENT_PERMISSIONS_FILE"
DEFAULT_VARIABLE = "SCIENCE_AGENT_PERMISSION_DEFAULT"
TIMEOUT_VARIABLE = "SCIENCE_AGENT_PERMISSION_TIMEOUT_S"
RULE_VARIABLES = {effect: f"SCIENCE_AGENT_PERMISSION_{effect.value.upper()}" for effect in Effect}
DEFAULT_TIMEOUT_S = 300
_KEYS = {"default", "allow", "ask", "deny"}


def _rule_list(where: str, key: str, value: Any) -> list[str]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise PermissionConfigError(f"{where}: {key}", f"must be a list of rule strings, got {type(value).__name__}")
    return list(value)


def rules_from_data(data: Mapping[str, Any], *, source: str = "config") -> RuleSet:
    """Rules from plain data ``{"default": ..., "allow": [...], "ask": [...], "deny": [...]}``."""
    if not isinstance(data, Mapping):
        raise PermissionConfigError(source, f"must be a table/object, got {type(data).__name__}")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise PermissionConfigError(
            f"{source}: {unknown[0]}", f"unknown key (expected one of {', '.join(sorted(_KEYS))})"
        )
    default = data.get("default", Effect.ASK.value)
    if default not in {effect.value for effect in Effect}:
        raise PermissionConfigError(f"{source}: default", f"must be allow, ask or deny; got {default!r}")
    return RuleSet.from_lists(
        allow=_rule_list(source, "allow", data.get("allow", [])),
        ask=_rule_list(source, "ask", data.get("ask", [])),
        deny=_rule_list(source, "deny", data.get("deny", [])),
        default=default,
        source=source,
    )


def rules_from_file(path: str | Path) -> RuleSet:
    """Rules from a ``.json`` or ``.toml`` file; errors name the file."""
    try:
        data = read_data_file(path)
    except DataFileError as error:
        raise PermissionConfigError(error.variable, error.detail) from None
    if isinstance(data, Mapping) and "permissions" in data:
        data = data["permissions"]
    return rules_from_data(data, source=str(path))


def _env_rules(environ: Mapping[str, str], variable: str) -> list[str]:
    raw = environ.get(variable, "").strip()
    if not raw:
        return []
    if raw.startswith("["):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as error:
            raise PermissionConfigError(variable, f"is not a valid JSON array: {error}") from None
        return _rule_list(variable, "value", value)
    return [part.strip() for part in raw.replace(";", "\n").splitlines() if part.strip()]


def rules_from_environment(environ: Mapping[str, str]) -> RuleSet:
    """Rules from ``SCIENCE_AGENT_PERMISSIONS_FILE`` plus the per-effect variables; the default variable wins."""
    file = environ.get(FILE_VARIABLE, "").strip()
    base = rules_from_file(file) if file else RuleSet()
    extra = RuleSet.from_lists(
        allow=_env_rules(environ, RULE_VARIABLES[Effect.ALLOW]),
        ask=_env_rules(environ, RULE_VARIABLES[Effect.ASK]),
        deny=_env_rules(environ, RULE_VARIABLES[Effect.DENY]),
        source="environment",
    )
    default = choice(environ, DEFAULT_VARIABLE, [e.value for e in Effect], base.default.value)
    return RuleSet(rules=base.rules + extra.rules, default=default)


def timeout_from_environment(environ: Mapping[str, str]) -> int:
    """Seconds a permission request waits before resolving as deny."""
    return positive_int(environ, TIMEOUT_VARIABLE, DEFAULT_TIMEOUT_S) or DEFAULT_TIMEOUT_S
