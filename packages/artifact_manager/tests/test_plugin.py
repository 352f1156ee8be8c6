"""The entry point and every hook the package implements."""

from __future__ import annotations

from sciencediscovery.artifact_manager import ArtifactObserver, ArtifactsChannel
from sciencediscovery.context import discover_state_channels
from sciencediscovery.runtime_core import list_plugins, make_plugin_manager

SWITCH = {"SCIENCEDISCOVERY_LOAD_PLUGINS": "tools,context,artifact_manager"}


def test_entry_point_registers_the_hooks() -> None:
    manager = make_plugin_manager(environ=SWITCH)
    [info] = [p for p in list_plugins(manager) if p.name == "artifact_manager"]
    assert info.distribution == "sciencediscovery-artifact-manager"
    assert {"register_tools", "register_tool_observers", "register_state_channels"} <= set(info.hooks)


def test_register_tools_register_tool_observers_and_register_state_channels(settings) -> None:
    manager = make_plugin_manager(environ=SWITCH)
    tools, observers = [], []
    manager.hook.register_tools(register=tools.append, settings=settings)
    manager.hook.register_tool_observers(register=observers.append, settings=settings)
    names = {tool.name: tool for tool in tools}
    assert {"register_artifact", "list_artifacts", "read_artifact", "download_artifact"} <= set(names)
    assert names["download_artifact"].action.value == "artifact_download"
    assert names["download_artifact"].permission_specifier({"url": "https://x.org/a.csv"}) == "domain:x.org"
    assert any(isinstance(observer, ArtifactObserver) for observer in observers)
    assert any(isinstance(channel, ArtifactsChannel) for channel in discover_state_channels(manager, settings))
