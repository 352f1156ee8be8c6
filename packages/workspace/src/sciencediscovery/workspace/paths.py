"""Resolving workspace paths inside mounts.

A workspace path is ``<mount>/<path inside the mount>`` (``data/raw/x.csv``),
or an absolute host path that lies inside a mount. Resolution follows
symlinks and ``..`` the way the operating system would, then requires the
result to lie inside the same mount: ``..`` climbing out, absolute paths
outside every mount and symlinks whose target leaves the mount are refused.
The mount name is matched exactly (case-sensitive). The resolved,
mount-relative form is what governance rules match (the tool's specifier).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import attrs

from sciencediscovery.tools.paths import SymlinkLoopError, stable_realpath

from .errors import PathRefusedError, ReadOnlyMountError
from .mounts import Mount


@attrs.frozen
class ResolvedPath:
    """A path inside a mount: ``relative`` is POSIX and ``""`` for the mount root; ``host`` is the real path."""

    mount: Mount
    relative: str
    host: Path

    @property
    def display(self) -> str:
        """The normalised workspace path, ``<mount>/<relative>`` (the permission specifier)."""
        return f"{self.mount.name}/{self.relative}" if self.relative else self.mount.name

    def child(self, host: Path) -> ResolvedPath:
        """A path found below this one by walking the tree (not re-resolved: callers never follow symlinks)."""
        return ResolvedPath(self.mount, _relative(host, self.mount.root), host)


def _relative(host: Path, root: Path) -> str:
    relative = host.relative_to(root).as_posix()
    return "" if relative == "." else relative


def _inside(real: str, root: Path) -> bool:
    return real == str(root) or real.startswith(str(root).rstrip(os.sep) + os.sep)


class Workspace:
    """The run's mounts and the one place workspace paths are resolved."""

    def __init__(self, mounts: Iterable[Mount]) -> None:
        self.mounts = {mount.name: mount for mount in mounts}

    def resolve(self, path: str) -> ResolvedPath:
        """Resolve ``path`` inside a mount or raise :class:`~.errors.PathRefusedError`."""
        if not isinstance(path, str) or not path.strip():
            raise PathRefusedError(str(path), "the path is empty")
        if "\x00" in path:
            raise PathRefusedError(path, "the path contains a NUL character")
        if os.path.isabs(path):
            return self._resolve_absolute(path)
        segments = [segment for segment in path.split("/") if segment not in ("", ".")]
        if not segments:
            raise PathRefusedError(path, f"name a mount first ({self._names()})")
        mount = self.mounts.get(segments[0])
        if mount is None:
            raise PathRefusedError(path, f"no mount named {segments[0]!r} ({self._names()})")
        real = _real(path, os.path.join(mount.root, *segments[1:]))
        if not _inside(real, mount.root):
            raise PathRefusedError(path, f"it leaves mount {mount.name!r} (through '..' or a symlink)")
        return ResolvedPath(mount, _relative(Path(real), mount.root), Path(real))

    def resolve_for_write(self, path: str) -> ResolvedPath:
        """Resolve ``path`` and require its mount to be read-write."""
        resolved = self.resolve(path)
        if not resolved.mount.writable:
            raise ReadOnlyMountError(path, resolved.mount.name)
        return resolved

    def specifier(self, path: str) -> str:
        """The permission specifier for ``path``: its resolved form, or the path as given when it is refused
        (the handler refuses it again, so a refused path never runs)."""
        try:
            return self.resolve(path).display
        except PathRefusedError:
            return path

    def _resolve_absolute(self, path: str) -> ResolvedPath:
        real = _real(path, path)
        inside = [mount for mount in self.mounts.values() if _inside(real, mount.root)]
        if not inside:
            raise PathRefusedError(path, f"it is outside every mount ({self._names()})")
        mount = max(inside, key=lambda m: len(str(m.root)))
        return ResolvedPath(mount, _relative(Path(real), mount.root), Path(real))

    def _names(self) -> str:
        listed = ", ".join(f"{m.name} ({m.mode.value})" for m in self.mounts.values())
        return f"mounts: {listed}" if listed else "no mounts are configured"


def _real(given: str, path: str) -> str:
    try:
        return stable_realpath(path)
    except SymlinkLoopError:
        raise PathRefusedError(given, "it runs into a symlink loop") from None
