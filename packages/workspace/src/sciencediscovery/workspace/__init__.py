"""Workspace mounts and file tools."""

from .errors import FileAccessError, MountConfigError, PathRefusedError, ReadOnlyMountError, WorkspaceError
from .mounts import Mount, MountMode, mounts_from_settings
from .paths import ResolvedPath, Workspace
from .tools import workspace_tools

__all__ = [
    "FileAccessError",
    "Mount",
    "MountConfigError",
    "MountMode",
    "PathRefusedError",
    "ReadOnlyMountError",
    "ResolvedPath",
    "Workspace",
    "WorkspaceError",
    "mounts_from_settings",
    "workspace_tools",
]
