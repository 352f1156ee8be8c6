"""The built-in specialists, read from the package's ``builtin.toml``."""

from __future__ import annotations

import functools
import importlib.resources
import tomllib

from .definitions import Specialist, specialists_from_mapping

BUILTIN_FILE = "builtin.toml"
LITERATURE_SCOUT = "literature-scout"
DATA_ANALYST = "data-analyst"
METHODS_COMPARER = "methods-comparer"
EVIDENCE_REVIEWER = "evidence-reviewer"


@functools.cache
def builtin_specialists() -> tuple[Specialist, ...]:
    """Literature scout, data analyst, methods comparer and evidence reviewer (validated once per process)."""
    resource = importlib.resources.files(__package__).joinpath(BUILTIN_FILE)
    return specialists_from_mapping(tomllib.loads(resource.read_text(encoding="utf-8")), source=BUILTIN_FILE)
