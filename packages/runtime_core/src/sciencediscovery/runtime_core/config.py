"""Validated reading of configuration values; every error names the variable."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .errors import ConfigurationError


def positive_int(environ: Mapping[str, str], variable: str, default: int | None = None) -> int | None:
    """Read ``variable`` as a positive integer; unset (or blank) gives ``default``."""
    raw = environ.get(variable)
    if raw is None or not raw.strip():
        return default
    text = raw.strip()
    if not text.isdigit() or int(text) < 1:
        raise ConfigurationError(variable, f"must be a positive integer, got {raw!r}")
    return int(text)


def choice(environ: Mapping[str, str], variable: str, allowed: Iterable[str], default: str) -> str:
    """Read ``variable`` as one of ``allowed`` (trimmed, case-insensitive); unset gives ``default``."""
    options = tuple(allowed)
    raw = environ.get(variable)
    if raw is None or not raw.strip():
        return default
    value = raw.strip().lower()
    if value not in options:
        raise ConfigurationError(variable, f"must be one of {', '.join(options)}; got {raw!r}")
    return value


def flag(environ: Mapping[str, str], variable: str) -> bool:
    """Read ``variable`` as a boolean switch: 1/true/yes/on or 0/false/no/off (unset is off)."""
    raw = environ.get(variable)
    if raw is None or not raw.strip():
        return False
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ConfigurationError(variable, f"must be 1/true/yes/on or 0/false/no/off; got {raw!r}")
