"""The entry point and every hook the package implements."""

from __future__ import annotations

from sciencediscovery.context import discover_state_channels
from sciencediscovery.provenance import ProvenanceRecorder, ReviewsChannel
from sciencediscovery.runtime_core import list_plugins, make_plugin_manager

SWITCH = {"SCIENCEDISCOVERY_LOAD_PLUGINS": "tools,context,provenance"}


def test_entry_point_registers_the_hooks(settings) -> None:
    manager = make_plugin_manager(environ=SWITCH)
    [info] = [p for p in list_plugins(manager) if p.name == "provenance"]
    assert info.distribution == "sciencediscovery-provenance"
    assert {"register_tools", "register_tool_observers", "register_state_channels"} <= set(info.hooks)


def test_register_tools_register_tool_observers_and_register_state_channels(settings) -> None:
    manager = make_plugin_manager(environ=SWITCH)
    tools, observers = [], []
    manager.hook.register_tools(register=tools.append, settings=settings)
    manager.hook.register_tool_observers(register=observers.append, settings=settings)
    assert {"record_claim", "list_claims", "review_checkpoint"} <= {tool.name for tool in tools}
    assert any(isinstance(observer, ProvenanceRecorder) for observer in observers)
    assert any(isinstance(channel, ReviewsChannel) for channel in discover_state_channels(manager, settings))


def test_register_event_sinks_gives_the_recorder(settings) -> None:
    manager = make_plugin_manager(environ={"SCIENCEDISCOVERY_LOAD_PLUGINS": "tools,context,provenance"})
    sinks = []
    manager.hook.register_event_sinks(register=sinks.append, settings=settings)
    assert any(isinstance(sink, ProvenanceRecorder) for sink in sinks)
