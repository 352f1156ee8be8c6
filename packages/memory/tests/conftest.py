"""A real kernel run for tests: plugin host, governed dispatcher, the real DynamicContextAssembler, scripted model."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from sciencediscovery.context import (
    ContextSettings,
    DeterministicSummarizer,
    build_context_assembler,
    discover_contributor_factories,
    discover_state_channels,
)
from sciencediscovery.context import plugin as context_plugin
from sciencediscovery.memory import event_sink
from sciencediscovery.memory import plugin as memory_plugin
from sciencediscovery.runtime_core import (
    CollectingSink,
    FanOutSink,
    Message,
    RunEventSink,
    RunRequest,
    RunResult,
    RuntimeBuilder,
    make_plugin_manager,
)
from sciencediscovery.runtime_core.testing import ListModelClient, ScriptStep
from sciencediscovery.tools import plugin as tools_plugin
from sciencediscovery.tools.compose import build_tools


@attrs.define
class KernelRun:
    result: RunResult
    model: ListModelClient
    events: CollectingSink
    channels: Any

    def result_of(self, call_id: str) -> Message:
        return next(m for m in self.result.history if m.tool_call_id == call_id)


async def kernel_run(
    settings: Mapping[str, Any],
    script: Sequence[ScriptStep],
    *,
    plugins: Iterable[object] = (),
    sinks: Iterable[RunEventSink] = (),
    context_id: str = "ctx-1",
    prompt: str = "Investigate TP53.",
) -> KernelRun:
    manager = make_plugin_manager(
        load_entry_points=False, plugins=[tools_plugin, context_plugin, memory_plugin, *plugins]
    )
    tools = build_tools(manager, settings)
    assembler = build_context_assembler(
        ContextSettings(),
        tools_provider=lambda scope: tools.registry.visible_specs(1),
        system_prompt=lambda scope: "You are a careful scientist.",
        summarizer=DeterministicSummarizer(),
        factories=discover_contributor_factories(manager, settings),
        channels=discover_state_channels(manager, settings),
    )
    events = CollectingSink()
    model = ListModelClient(script)
    runtime = (
        RuntimeBuilder()
        .context_assembler(assembler)
        .model_client(model)
        .tool_dispatcher(tools.dispatcher)
        .event_sink(FanOutSink([assembler, event_sink(settings), events, *sinks]))
        .build()
    )
    request = RunRequest(context_id, [Message.user(prompt)])
    channels = assembler.channels_for(request.run_id)
    result = await runtime.run(request)
    return KernelRun(result, model, events, channels)


@pytest.fixture
def settings(tmp_path: Path) -> dict[str, Any]:
    return {"data_dir": tmp_path / "data"}


@pytest.fixture
def run_kernel() -> Callable[..., Any]:
    return kernel_run
