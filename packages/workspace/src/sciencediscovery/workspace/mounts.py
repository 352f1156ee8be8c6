"""Workspace mounts: named host directories, read-only or read-write.

``settings["workspace_mounts"]`` is a list of mappings, one per mount::

    [{"name": "data", "path": "/srv/project/data", "mode": "read_only"},
     {"name": "out", "path": "/srv/project/out", "mode": "read_write"}]

``name`` is the first segment of every workspace path (``data/raw.csv``);
``mode`` defaults to ``read_only``. The host path must be an existing
directory; it is stored fully resolved (symlinks followed). Mounts must not
overlap: a root equal to or inside another mount's root is refused, because a
path is resolved in the mount its first segment names, so a read-write parent
would otherwise reach into a read-only child (``proj/data/x`` past ``data``).
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from .errors import MountConfigError

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


class MountMode(enum.StrEnum):
    READ_ONLY = "read_only"
    READ_WRITE = "read_write"


@attrs.frozen
class Mount:
    """One mount. ``root`` is the resolved host directory."""

    name: str
    root: Path
    mode: MountMode

    @property
    def writable(self) -> bool:
        return self.mode is MountMode.READ_WRITE


def _mount(index: int, entry: Any) -> Mount:
    where = f"[{index}]"
    if not isinstance(entry, Mapping):
        raise MountConfigError(where, f"must be a mapping with name, path and mode, got {type(entry).__name__}")
    unknown = sorted(set(entry) - {"name", "path", "mode"})
    if unknown:
        raise MountConfigError(f"{where}.{unknown[0]}", "unknown key (expected name, path, mode)")
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise MountConfigError(f"{where}.name", f"{name!r} must be letters, digits, _ . - (no slashes)")
    raw_path = entry.get("path")
    if not isinstance(raw_path, str | os.PathLike) or not str(raw_path):
        raise MountConfigError(f"{where}.path", f"mount {name!r} needs a host directory path")
    root = Path(os.path.realpath(raw_path))
    if not root.is_dir():
        raise MountConfigError(f"{where}.path", f"mount {name!r}: {raw_path} is not an existing directory")
    try:
        mode = MountMode(entry.get("mode", MountMode.READ_ONLY))
    except ValueError:
        raise MountConfigError(f"{where}.mode", f"mount {name!r}: mode must be read_only or read_write") from None
    return Mount(name, root, mode)


def mounts_from_settings(value: Iterable[Any] | None) -> tuple[Mount, ...]:
    """Validate ``settings["workspace_mounts"]``; errors name the entry and field."""
    if value is None:
        return ()
    if isinstance(value, str | bytes | Mapping):
        raise MountConfigError("", "must be a list of {name, path, mode} mappings")
    mounts = tuple(_mount(index, entry) for index, entry in enumerate(value))
    seen: set[str] = set()
    for index, mount in enumerate(mounts):
        if mount.name in seen:
            raise MountConfigError(f"[{index}].name", f"duplicate mount name {mount.name!r}")
        seen.add(mount.name)
    for index, mount in enumerate(mounts):
        for earlier, other in enumerate(mounts[:index]):
            if _overlap(mount.root, other.root):
                relation = "is the same directory as" if mount.root == other.root else "overlaps"
                raise MountConfigError(
                    f"[{index}].path",
                    f"mount {mount.name!r} ({mount.root}) {relation} mount {other.name!r} "
                    f"(workspace_mounts[{earlier}], {other.root}); mounts must not be equal or nested",
                )
    return mounts


def _overlap(first: Path, second: Path) -> bool:
    """Whether one resolved root is equal to or inside the other."""
    return first == second or first.is_relative_to(second) or second.is_relative_to(first)
