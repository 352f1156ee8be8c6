"""The register_tools hook, called through a real plugin host."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.runtime_core import make_plugin_manager
from sciencediscovery.tools import plugin as tools_plugin
from sciencediscovery.tools.definitions import ToolDefinition, ToolOutput
from sciencediscovery.workspace import MountConfigError
from sciencediscovery.workspace import plugin as workspace_plugin


def _registered(settings: dict[str, object]) -> list[ToolDefinition]:
    manager = make_plugin_manager(load_entry_points=False, plugins=[tools_plugin, workspace_plugin])
    tools: list[ToolDefinition] = []
    manager.hook.register_tools(register=tools.append, settings=settings)
    return tools


def test_register_tools_registers_the_four_tools_over_the_settings_mounts(
    workspace_settings: dict[str, object],
) -> None:
    tools = _registered(workspace_settings)
    assert sorted(tool.name for tool in tools) == ["list_files", "read_file", "search_files", "write_file"]
    read = next(tool for tool in tools if tool.name == "read_file")
    assert read.permission_specifier({"path": "ro/./data.csv"}) == "ro/data.csv"


def test_register_tools_without_mounts_registers_nothing() -> None:
    assert _registered({}) == []
    assert _registered({"workspace_mounts": []}) == []


def test_register_tools_rejects_malformed_mounts_at_startup(tmp_path: Path) -> None:
    with pytest.raises(MountConfigError, match=r"workspace_mounts\[0\]\.mode"):
        _registered({"workspace_mounts": [{"name": "a", "path": str(tmp_path), "mode": "write"}]})


def test_register_tools_passes_the_entry_filter_from_settings(
    workspace_settings: dict[str, object], invoke: Callable[[ToolDefinition, Mapping[str, Any]], ToolOutput]
) -> None:
    seen: list[tuple[str, str]] = []

    def entry_filter(tool_name: str, display_path: str) -> bool:
        seen.append((tool_name, display_path))
        return display_path != "ws/secret"

    tools = {tool.name: tool for tool in _registered({**workspace_settings, "workspace_entry_filter": entry_filter})}
    listing = invoke(tools["list_files"], {"path": "ws"})
    assert "ws/secret/" not in listing.content.splitlines()
    assert "ws/public/" in listing.content.splitlines()
    assert ("list_files", "ws/secret") in seen


def test_register_tools_rejects_an_entry_filter_that_is_not_callable(workspace_settings: dict[str, object]) -> None:
    with pytest.raises(TypeError, match="workspace_entry_filter"):
        _registered({**workspace_settings, "workspace_entry_filter": "deny secrets"})
