"""The entry point and every hook the package implements."""

from __future__ import annotations

import asyncio

from sciencediscovery.context import (
    ContextScope,
    ContributionRequest,
    discover_contributor_factories,
    discover_state_channels,
)
from sciencediscovery.memory import MemoryChannel, ObservationSink, open_graph
from sciencediscovery.runtime_core import list_plugins, make_plugin_manager

SWITCH = {"SCIENCEDISCOVERY_LOAD_PLUGINS": "tools,context,memory"}


def test_entry_point_registers_the_hooks() -> None:
    manager = make_plugin_manager(environ=SWITCH)
    [info] = [p for p in list_plugins(manager) if p.name == "memory"]
    assert info.distribution == "sciencediscovery-memory"
    assert {
        "register_tools",
        "register_tool_observers",
        "register_context_contributors",
        "register_state_channels",
    } <= set(info.hooks)


def test_register_tools_register_tool_observers_and_register_state_channels(settings) -> None:
    manager = make_plugin_manager(environ=SWITCH)
    tools, observers = [], []
    manager.hook.register_tools(register=tools.append, settings=settings)
    manager.hook.register_tool_observers(register=observers.append, settings=settings)
    assert {"memory_write", "memory_search"} <= {tool.name for tool in tools}
    assert any(isinstance(observer, ObservationSink) for observer in observers)
    assert any(isinstance(channel, MemoryChannel) for channel in discover_state_channels(manager, settings))


def test_register_context_contributors_gives_the_memory_context_factory(settings) -> None:
    open_graph(settings["data_dir"]).add_observation("TP53", "is a tumour suppressor")
    manager = make_plugin_manager(environ=SWITCH)
    [factory] = [f for f in discover_contributor_factories(manager, settings) if f.id == "memory.context"]
    contributor = factory.create(ContextScope.MAIN)
    assert contributor.id == "memory.snapshot" and set(contributor.scopes) == {ContextScope.MAIN}
    request = ContributionRequest(context_id="ctx-1", run_id="run-1", turn=1, scope=ContextScope.MAIN, history=())
    [attachment] = asyncio.run(contributor.contribute(request)).attachments
    assert (attachment.id, attachment.source, attachment.trust.value) == ("memory.snapshot", "memory", "trusted_data")
    assert "[TP53] is a tumour suppressor" in attachment.content


def test_register_event_sinks_gives_an_observation_sink_writing_final_answers(settings) -> None:
    from sciencediscovery.runtime_core import Message, ModelOutput, Usage

    manager = make_plugin_manager(environ=SWITCH)
    sinks = []
    manager.hook.register_event_sinks(register=sinks.append, settings=settings)
    [sink] = [s for s in sinks if isinstance(s, ObservationSink)]
    sink.emit(
        ModelOutput(
            run_id="run-1",
            context_id="ctx-9",
            turn=1,
            message=Message.assistant("TP53 loss drives resistance"),
            finish_reason="stop",
            usage=Usage(),
        )
    )
    recent = open_graph(settings["data_dir"]).recent(context_id="ctx-9")
    assert any("TP53 loss drives resistance" in observation.text for observation in recent)
