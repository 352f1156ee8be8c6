"""A real kernel run for tests: plugin host, governed dispatcher, state channels and a scripted model."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from sciencediscovery.context import RunStateChannels, discover_state_channels
from sciencediscovery.context import plugin as context_plugin
from sciencediscovery.provenance import event_sink, manifest_model_client
from sciencediscovery.provenance import plugin as provenance_plugin
from sciencediscovery.runtime_core import (
    CollectingSink,
    FanOutSink,
    Message,
    RunRequest,
    RunResult,
    RuntimeBuilder,
    make_plugin_manager,
)
from sciencediscovery.runtime_core.testing import ListModelClient, PassThroughAssembler, ScriptStep
from sciencediscovery.tools import plugin as tools_plugin
from sciencediscovery.tools.compose import build_tools


@attrs.define
class KernelRun:
    """What a finished scripted run leaves behind."""

    result: RunResult
    model: ListModelClient
    events: CollectingSink
    channels: RunStateChannels


async def kernel_run(
    settings: Mapping[str, Any],
    script: Sequence[ScriptStep],
    *,
    plugins: Iterable[object] = (),
    context_id: str = "ctx-1",
    prompt: str = "Investigate.",
) -> KernelRun:
    manager = make_plugin_manager(
        load_entry_points=False, plugins=[tools_plugin, context_plugin, provenance_plugin, *plugins]
    )
    tools = build_tools(manager, settings)
    channels = RunStateChannels(discover_state_channels(manager, settings))
    events = CollectingSink()
    model = ListModelClient(script)
    runtime = (
        RuntimeBuilder()
        .context_assembler(PassThroughAssembler("You are a scientist.", tools.registry.visible_specs(1)))
        .model_client(manifest_model_client(model, settings))
        .tool_dispatcher(tools.dispatcher)
        .event_sink(FanOutSink([event_sink(settings), channels, events]))
        .build()
    )
    result = await runtime.run(RunRequest(context_id, [Message.user(prompt)]))
    return KernelRun(result, model, events, channels)


@pytest.fixture
def settings(tmp_path: Path) -> dict[str, Any]:
    return {"data_dir": tmp_path / "data"}


@pytest.fixture
def run_kernel() -> Callable[..., Any]:
    return kernel_run
