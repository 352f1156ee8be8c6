"""Tool-list fingerprints: what a server offered, and what changed since it was approved."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@attrs.frozen
class RemoteTool:
    """One tool as a server lists it. ``fingerprint`` hashes name, description and input schema."""

    name: str
    description: str
    input_schema: Mapping[str, Any]

    @property
    def fingerprint(self) -> str:
        body = _canonical({"name": self.name, "description": self.description, "schema": self.input_schema})
        return hashlib.sha256(body.encode()).hexdigest()

    def to_data(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": dict(self.input_schema)}


@attrs.frozen
class ToolListChange:
    """How a server's live tool list differs from its approved one (names, sorted)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    @property
    def withheld(self) -> tuple[str, ...]:
        """Tools that may not be called until the list is approved again."""
        return tuple(sorted(self.added + self.changed))


def list_fingerprint(tools: Iterable[RemoteTool]) -> str:
    """One hash over a whole tool list (order-independent)."""
    return hashlib.sha256(_canonical(sorted(tool.fingerprint for tool in tools)).encode()).hexdigest()


def diff(approved: Iterable[RemoteTool], live: Iterable[RemoteTool]) -> ToolListChange:
    """What changed from ``approved`` to ``live``."""
    old = {tool.name: tool.fingerprint for tool in approved}
    new = {tool.name: tool.fingerprint for tool in live}
    return ToolListChange(
        added=tuple(sorted(set(new) - set(old))),
        removed=tuple(sorted(set(old) - set(new))),
        changed=tuple(sorted(name for name in set(old) & set(new) if old[name] != new[name])),
    )
