"""Typed errors of the workspace. ``kind`` is the error kind a tool result carries."""

from __future__ import annotations


class WorkspaceError(Exception):
    """Base class of every error raised by sciencediscovery.workspace."""

    kind = "workspace_error"


class MountConfigError(WorkspaceError, ValueError):
    """``settings["workspace_mounts"]`` is malformed; the message names the mount and field."""

    kind = "configuration_error"

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        super().__init__(f"workspace_mounts{where}: {message}")


class PathRefusedError(WorkspaceError, PermissionError):
    """A path resolves outside every mount, or names no mount; the message names the path."""

    kind = "path_refused"

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"path {path!r} refused: {reason}")


class ReadOnlyMountError(WorkspaceError, PermissionError):
    """A write targeted a read-only mount."""

    kind = "read_only_mount"

    def __init__(self, path: str, mount: str) -> None:
        self.path = path
        self.mount = mount
        super().__init__(f"path {path!r} is in mount {mount!r}, which is read-only")


class FileAccessError(WorkspaceError, OSError):
    """The path is inside a mount but cannot be used as asked (missing, a directory, binary, too large)."""

    kind = "file_error"

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")
