"""Validated reading of configuration values; every error names the variable."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

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


class DataFileError(ConfigurationError):
    """A configuration file could not be read or parsed.

    ``variable`` is the file's path, ``detail`` the problem and ``field`` is
    ``path`` (missing, unreadable, wrong suffix) or ``syntax`` (not valid TOML/JSON).
    """

    def __init__(self, path: str, field: str, detail: str) -> None:
        self.field = field
        self.detail = detail
        super().__init__(path, detail)


def read_data_file(path: str | Path) -> Any:
    """Parse a ``.toml`` or ``.json`` configuration file.

    Raises :class:`DataFileError` naming the file when it cannot be read, has
    another suffix, or is not valid TOML/JSON.
    """
    file = Path(path)
    if file.suffix not in {".toml", ".json"}:
        raise DataFileError(str(file), "path", "must end in .toml or .json")
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise DataFileError(str(file), "path", f"cannot read the file: {error.strerror or error}") from None
    try:
        return tomllib.loads(text) if file.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise DataFileError(str(file), "syntax", f"is not valid {file.suffix[1:].upper()}: {error}") from None
