"""Small helpers shared by the test modules: plugin hosts, tool calls, child processes."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.data_source import McpBroker, SourcesConfig, ToolPinStore, sources_from_data
from sciencediscovery.data_source import plugin as data_source_plugin
from sciencediscovery.runtime_core import (
    AssembledContext,
    AssemblyRequest,
    CollectingSink,
    ExternalWaits,
    Message,
    ModelInput,
    ModelResponse,
    RunRequest,
    RunResult,
    RuntimeBuilder,
    ToolCall,
    TurnContext,
    make_plugin_manager,
)
from sciencediscovery.tools import RunTools, build_tools
from sciencediscovery.tools import plugin as tools_plugin


def stdio_sources(npm_servers: Mapping[str, Path], root: Path | None = None) -> SourcesConfig:
    servers: dict[str, Any] = {
        "everything": {
            "command": "node",
            "args": [str(npm_servers["everything"]), "stdio"],
            "description": "MCP protocol reference server",
        }
    }
    if root is not None:
        servers["filesystem"] = {
            "command": "node",
            "args": [str(npm_servers["filesystem"]), str(root)],
            "description": "Read and list files of the project folder",
        }
    return sources_from_data({"mcpServers": servers}, "test")


def broker(sources: SourcesConfig, pins: Path) -> McpBroker:
    return McpBroker(sources, ToolPinStore(pins))


def run_tools(settings: Mapping[str, Any], *plugins: object) -> RunTools:
    manager = make_plugin_manager(load_entry_points=False, plugins=[tools_plugin, data_source_plugin, *plugins])
    return build_tools(manager, settings)


def call(name: str, call_id: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def says(text: str = "", *calls: ToolCall) -> Callable[[ModelInput], Message]:
    return lambda model_input: Message.assistant(text, calls)


def child_pids(marker: str) -> list[int]:
    """Our direct child processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue
        if parent == os.getpid() and marker in command:
            found.append(int(entry.name))
    return found


def kill_children(marker: str) -> list[int]:
    pids = child_pids(marker)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return pids


class RegistryAssembler:
    """PassThrough-style assembler: canonical history plus ``registry.visible_specs(turn)``; records each input."""

    def __init__(self, tools: RunTools, system_prompt: str = "You are a research agent.") -> None:
        self.tools = tools
        self.system_prompt = system_prompt
        self.inputs: list[ModelInput] = []

    async def assemble(self, request: AssemblyRequest) -> AssembledContext:
        specs = self.tools.registry.visible_specs(request.turn)
        model_input = ModelInput(self.system_prompt, request.history, specs)
        self.inputs.append(model_input)
        return AssembledContext(request.history, model_input)

    def tool_names(self, turn: int) -> list[str]:
        return [spec.name for spec in self.inputs[turn - 1].tools]


class ScriptedModel:
    """Answers each turn with the next function of the script applied to the model input."""

    def __init__(self, script: list[Callable[[ModelInput], Message]]) -> None:
        self.script = list(script)

    async def complete(self, model_input: ModelInput, context: TurnContext) -> ModelResponse:
        return ModelResponse(self.script.pop(0)(model_input))


async def kernel_run(
    tools: RunTools, script: list[Callable[[ModelInput], Message]], sink: Any = None
) -> tuple[RunResult, RegistryAssembler]:
    """One real kernel run over ``tools`` with a scripted model; returns the result and the assembler."""
    sink = sink or CollectingSink()
    assembler = RegistryAssembler(tools)
    runtime = (
        RuntimeBuilder()
        .context_assembler(assembler)
        .model_client(ScriptedModel(script))
        .tool_dispatcher(tools.dispatcher)
        .event_sink(sink)
        .build()
    )
    request = RunRequest("ctx-data-source", (Message.user("Review the literature on p53."),), max_turns=len(script))
    return await runtime.run(request), assembler


def run_kernel(
    tools: RunTools, script: list[Callable[[ModelInput], Message]]
) -> tuple[RunResult, RegistryAssembler, CollectingSink]:
    sink = CollectingSink()
    result, assembler = asyncio.run(kernel_run(tools, script, sink))
    return result, assembler, sink


def turn_context(sink: CollectingSink, turn: int = 1) -> TurnContext:
    waits = ExternalWaits("run-1", "ctx-1", sink.emit)
    waits.turn = turn
    return TurnContext(run_id="run-1", context_id="ctx-1", turn=turn, events=sink, waits=waits)
