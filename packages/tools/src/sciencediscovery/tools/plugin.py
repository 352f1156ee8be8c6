"""Entry-point plugin of sciencediscovery-tools: the tool hooks, and the ``read_tool_output`` tool."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import hookimpl

from . import hookspecs
from .definitions import ToolDefinition
from .read_output import read_tool_output_tool
from .settings import OUTPUT_STORE_SETTING, ToolSettings
from .store import ToolOutputStore


@hookimpl
def add_hookspecs(plugin_manager: Any) -> None:
    plugin_manager.add_hookspecs(hookspecs)


@hookimpl
def register_tools(register: Callable[[ToolDefinition], None], settings: Mapping[str, Any]) -> None:
    """Register ``read_tool_output`` over the run's output store (present when built with ``build_tools``)."""
    store = settings.get(OUTPUT_STORE_SETTING)
    if isinstance(store, ToolOutputStore):
        register(read_tool_output_tool(store, ToolSettings.from_settings(settings).slice_chars))
