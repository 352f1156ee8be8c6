"""Entry-point plugin of sciencediscovery-workspace: registers the file tools over the run's mounts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import hookimpl
from sciencediscovery.tools.definitions import ToolDefinition

from .mounts import mounts_from_settings
from .paths import Workspace
from .tools import workspace_tools


@hookimpl
def register_tools(register: Callable[[ToolDefinition], None], settings: Mapping[str, Any]) -> None:
    """Register the four file tools when ``settings["workspace_mounts"]`` names at least one mount.

    ``settings["workspace_entry_filter"]`` (optional) is passed on as the tools' entry filter.
    """
    mounts = mounts_from_settings(settings.get("workspace_mounts"))
    if not mounts:
        return
    entry_filter = settings.get("workspace_entry_filter")
    if entry_filter is not None and not callable(entry_filter):
        raise TypeError(
            "settings['workspace_entry_filter'] must be a callable (tool_name, display_path) -> bool, "
            f"got {type(entry_filter).__name__}"
        )
    for tool in workspace_tools(Workspace(mounts), entry_filter=entry_filter):
        register(tool)
