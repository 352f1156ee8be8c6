"""A kernel harness: real RuntimeBuilder, real tools registry/dispatcher, the real context assembler, the
orchestration and specialist plugins, and scripted models written in the tests."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable

import attrs
import pytest

from sciencediscovery.context import (
    ContextScope,
    ContextSettings,
    DeterministicSummarizer,
    RunStateChannels,
    build_context_assembler,
    discover_contributor_factories,
    discover_state_channels,
)
from sciencediscovery.context import plugin as context_plugin
from sciencediscovery.orchestration import ChildRunSpec, prepare_settings
from sciencediscovery.orchestration import plugin as orchestration_plugin
from sciencediscovery.runtime_core import (
    CollectingSink,
    FanOutSink,
    Message,
    ModelInput,
    ModelResponse,
    RunRequest,
    RunResult,
    RuntimeBuilder,
    TurnStarted,
    hookimpl,
    make_plugin_manager,
)
from sciencediscovery.runtime_core.testing import ListModelClient
from sciencediscovery.runtime_core.testing import ScriptStep as Step
from sciencediscovery.specialist import SpecialistRunner, supervise_child_runs
from sciencediscovery.specialist import plugin as specialist_plugin
from sciencediscovery.tools import plugin as tools_plugin
from sciencediscovery.tools.compose import build_tools
from sciencediscovery.tools.definitions import ToolDefinition
from sciencediscovery.tools.registry import ToolRegistry


def reply(text: str = "", *calls) -> ModelResponse:
    return ModelResponse(Message.assistant(text, calls))


ScriptedModel = ListModelClient
"""Answers each call with the next step; a step may be an async function of the input (to block or check)."""


def plugin_manager(*extra: object):
    return make_plugin_manager(
        load_entry_points=False,
        plugins=[tools_plugin, context_plugin, orchestration_plugin, specialist_plugin, *extra],
    )


class TurnTools:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.turn = 1

    def emit(self, event) -> None:
        if isinstance(event, TurnStarted):
            self.turn = event.turn

    def __call__(self, scope) -> tuple:
        return self.registry.visible_specs(self.turn)


@attrs.define
class KernelRun:
    model: ScriptedModel
    channels: RunStateChannels
    registry: ToolRegistry
    sink: CollectingSink
    settings: dict

    @property
    def runner(self) -> SpecialistRunner:
        return self.settings["child_run_factory"]


def compose(manager, settings: dict, scope: ContextScope, model: ScriptedModel, *, allow=None, run_id="run-main"):
    """Composed like the service's composition root: prepare, supervise child runs, build tools, plugin sinks."""
    prepared = supervise_child_runs(prepare_settings(manager, settings))
    run_tools = build_tools(manager, prepared, allow=allow)
    prepared = {**prepared, "tool_registry": run_tools.registry}
    turn_tools = TurnTools(run_tools.registry)
    assembler = build_context_assembler(
        ContextSettings(),
        tools_provider=turn_tools,
        system_prompt=lambda scope: prepared["profiles"].for_scope(scope).identity,
        summarizer=DeterministicSummarizer(),
        scope=scope,
        factories=discover_contributor_factories(manager, prepared),
        channels=discover_state_channels(manager, prepared),
    )
    plugin_sinks: list = []
    manager.hook.register_event_sinks(register=plugin_sinks.append, settings=prepared)
    sink = CollectingSink()
    runtime = (
        RuntimeBuilder()
        .context_assembler(assembler)
        .model_client(model)
        .tool_dispatcher(run_tools.dispatcher)
        .event_sink(FanOutSink([turn_tools, assembler, sink, *plugin_sinks]))
        .build()
    )
    return runtime, KernelRun(model, assembler.channels_for(run_id), run_tools.registry, sink, prepared)


class ChildFactory:
    """The composition root's ChildRunFactory for tests: each child is a real kernel run with its
    profile-governed tools; one scripted model per specialist name (``"subagent"`` without one) answers
    every run of that specialist in turn, so a repair round continues the same script."""

    def __init__(self, manager, base_settings: dict, scripts: dict[str, list[Step]]) -> None:
        self.manager = manager
        self.base_settings = base_settings
        self.models = {name: ScriptedModel(script) for name, script in scripts.items()}
        self.specs: list[ChildRunSpec] = []
        self.runs: dict[str, KernelRun] = {}

    async def run_child(self, spec: ChildRunSpec) -> RunResult:
        self.specs.append(spec)
        settings = spec.settings(self.base_settings)
        every_tool = ToolRegistry.from_plugins(self.manager, prepare_settings(self.manager, settings))
        allow = [tool.name for tool in spec.select_tools(every_tool.get(name) for name in every_tool.names)]
        run_id = f"run-{len(self.specs)}-{spec.specialist or spec.scope.value}"
        model = self.models[spec.specialist or "subagent"]
        runtime, run = compose(
            self.manager, settings, ContextScope(spec.scope.value), model, allow=allow, run_id=run_id
        )
        self.runs[spec.context_id] = run
        return await runtime.run(RunRequest(spec.context_id, spec.history, max_turns=spec.max_turns, run_id=run_id))


def main_run(manager, script: list[Step], child_scripts: dict[str, list[Step]], settings: dict | None = None):
    """A main run wired to a ChildFactory (not yet started): ``(runtime, run, factory)``."""
    base = dict(settings or {})
    factory = ChildFactory(manager, base, child_scripts)
    runtime, run = compose(manager, {**base, "child_run_factory": factory}, ContextScope.MAIN, ScriptedModel(script))
    return runtime, run, factory


def run_main(manager, script, child_scripts, settings=None):
    runtime, run, factory = main_run(manager, script, child_scripts, settings)
    result = asyncio.run(runtime.run(RunRequest("ctx-main", [Message.user("go")], run_id="run-main")))
    return result, run, factory


class Gate:
    """An async step that blocks until released, then answers with ``then``; counts who is waiting."""

    def __init__(self, then: ModelResponse, release: asyncio.Event | None = None) -> None:
        self.then = then
        self.release = release
        self.entered = 0

    async def __call__(self, model_input: ModelInput) -> ModelResponse:
        self.entered += 1
        assert self.release is not None
        await self.release.wait()
        return self.then


async def until(condition: Callable[[], bool], *, steps: int = 2000) -> None:
    """Yield to the event loop until ``condition()`` holds (fails after ``steps`` yields, never on a clock)."""
    for _ in range(steps):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never held")


async def _read_file(invocation):
    return f"contents of {invocation.arguments.get('path')}"


async def _list_files(invocation):
    return "data/assay.csv\nmethods/a.md"


class LabTools:
    """Workspace-like read tools, registered as a third-party plugin would."""

    @hookimpl
    def register_tools(self, register, settings):
        path = {"type": "object", "properties": {"path": {"type": "string"}}, "additionalProperties": False}
        register(ToolDefinition("read_file", "Read a file", path, _read_file, read_only=True))
        register(ToolDefinition("list_files", "List files", {"type": "object"}, _list_files, read_only=True))


@pytest.fixture
def harness():
    return types.SimpleNamespace(
        manager=plugin_manager,
        main_run=main_run,
        run_main=run_main,
        ScriptedModel=ScriptedModel,
        Gate=Gate,
        LabTools=LabTools,
        until=until,
    )
