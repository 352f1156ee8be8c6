from __future__ import annotations

import types
from pathlib import Path

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
    ModelInput,
    RunRequest,
    RunResult,
    RuntimeBuilder,
    TurnStarted,
    hookimpl,
    make_plugin_manager,
)
from sciencediscovery.runtime_core.testing import ListModelClient
from sciencediscovery.tools import plugin as tools_plugin
from sciencediscovery.tools.compose import build_tools
from sciencediscovery.tools.definitions import ToolAction, ToolDefinition
from sciencediscovery.tools.registry import ToolRegistry

LITERATURE_BODY = """# Systematic literature review

1. Search PubMed and preprint servers with explicit inclusion criteria.
2. Screen titles and abstracts; record every exclusion reason.
3. Synthesize findings per mechanism; cite every claim and state uncertainty.
"""


def write_skill(root: Path, name: str, description: str, body: str, *, version: str | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    version_line = f"version: {version}\n" if version else ""
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{version_line}---\n{body}")
    return folder


@pytest.fixture(name="write_skill")
def write_skill_fixture():
    return write_skill


@pytest.fixture(name="literature_body")
def literature_body_fixture() -> str:
    return LITERATURE_BODY


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "literature-review", "Systematic literature review", LITERATURE_BODY, version='"1.0.0"')
    write_skill(root, "assay-comparison", "Compare assay methods", "Tabulate both methods side by side.\n")
    (root / "literature-review" / "checklist.md").write_text("- PRISMA flow\n")
    return root


# -- a kernel harness: real RuntimeBuilder, real tools registry/dispatcher, contributors from the plugin host --


def plugin_manager(*extra: object):
    return make_plugin_manager(
        load_entry_points=False, plugins=[tools_plugin, context_plugin, orchestration_plugin, *extra]
    )


class TurnTools:
    """``tools_provider`` for the assembler: the registry's governed tools at the current kernel turn."""

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
    """One composed run and what it exposes to assertions."""

    model: ListModelClient
    channels: RunStateChannels
    registry: ToolRegistry
    sink: CollectingSink
    settings: dict

    @property
    def inputs(self) -> list[ModelInput]:
        return self.model.inputs


def compose(manager, settings: dict, scope: ContextScope, script, *, allow=None, context=None, run_id="run-main"):
    """A kernel runtime with the real tools registry/dispatcher and the real DynamicContextAssembler."""
    prepared = prepare_settings(manager, settings)
    run_tools = build_tools(manager, prepared, allow=allow)
    prepared = {**prepared, "tool_registry": run_tools.registry}
    turn_tools = TurnTools(run_tools.registry)
    assembler = build_context_assembler(
        context or ContextSettings(),
        tools_provider=turn_tools,
        system_prompt=lambda scope: prepared["profiles"].for_scope(scope).identity,
        summarizer=DeterministicSummarizer(),
        scope=scope,
        factories=discover_contributor_factories(manager, prepared),
        channels=discover_state_channels(manager, prepared),
    )
    sink = CollectingSink()
    model = ListModelClient(script)
    runtime = (
        RuntimeBuilder()
        .context_assembler(assembler)
        .model_client(model)
        .tool_dispatcher(run_tools.dispatcher)
        .event_sink(FanOutSink([turn_tools, assembler, sink]))
        .build()
    )
    return runtime, KernelRun(model, assembler.channels_for(run_id), run_tools.registry, sink, prepared)


class KernelChildFactory:
    """The composition root's ChildRunFactory, for tests: each child is a real kernel run with its own
    profile-governed tools and a scripted model answering from ``scripts[scope]``."""

    def __init__(self, manager, base_settings: dict, scripts: dict[str, list]) -> None:
        self.manager = manager
        self.base_settings = base_settings
        self.scripts = scripts
        self.specs: list[ChildRunSpec] = []
        self.runs: list[KernelRun] = []

    async def run_child(self, spec: ChildRunSpec) -> RunResult:
        self.specs.append(spec)
        settings = spec.settings(self.base_settings)
        every_tool = ToolRegistry.from_plugins(self.manager, prepare_settings(self.manager, settings))
        allow = [tool.name for tool in spec.select_tools(every_tool.get(name) for name in every_tool.names)]
        run_id = f"run-{len(self.runs)}-{spec.scope.value}"
        runtime, run = compose(
            self.manager,
            settings,
            ContextScope(spec.scope.value),
            self.scripts[spec.scope.value],
            allow=allow,
            run_id=run_id,
        )
        self.runs.append(run)
        return await runtime.run(RunRequest(spec.context_id, spec.history, max_turns=spec.max_turns, run_id=run_id))


async def _list_files(invocation):
    return "methods/a.md\nmethods/b.md"


async def _read_file(invocation):
    return f"contents of {invocation.arguments.get('path')}"


async def _write_file(invocation):
    return "written"


async def _biomed_search(invocation):
    return "PMID:1 TP53 R175H confers resistance; PMID:2 MDM2 amplification"


class LabTools:
    """A third-party-style plugin registering workspace-like tools and one deferred MCP tool."""

    @hookimpl
    def register_tools(self, register, settings):
        path = {"type": "object", "properties": {"path": {"type": "string"}}, "additionalProperties": False}
        register(ToolDefinition("list_files", "List files", {"type": "object"}, _list_files, read_only=True))
        register(ToolDefinition("read_file", "Read a file", path, _read_file, read_only=True))
        register(ToolDefinition("write_file", "Write a file", path, _write_file, action=ToolAction.WRITE))
        register(
            ToolDefinition(
                "mcp_biomed_search",
                "Search biomedical literature through the biomedical MCP server",
                {"type": "object", "properties": {"query": {"type": "string"}}},
                _biomed_search,
                deferred=True,
                action=ToolAction.CONNECTOR,
            )
        )


@pytest.fixture
def kernel():
    """The harness: ``manager()``, ``compose(...)``, ``ChildFactory`` and the ``LabTools`` plugin."""
    return types.SimpleNamespace(
        manager=plugin_manager, compose=compose, ChildFactory=KernelChildFactory, LabTools=LabTools
    )
