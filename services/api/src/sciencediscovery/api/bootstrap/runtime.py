"""Wires one run: the kernel's four ports to context assembly, the model client, governed tools and sinks.

This is the only place that constructs domain objects. Packages contribute
through their plugin hooks; this module collects the contributions for the
run's scope and hands them to the kernel.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from sciencediscovery.context import (
    ContextScope,
    ContextSettings,
    ContributionRequest,
    DeterministicSystemPromptRenderer,
    ModelSummarizer,
    SystemSection,
    TiktokenEstimator,
    build_context_assembler,
    discover_contributor_factories,
    discover_state_channels,
)
from sciencediscovery.context.trace import safe_context_dir
from sciencediscovery.data_source import prepare_data_sources
from sciencediscovery.model import ScriptedProvider, resolve_model_facts
from sciencediscovery.orchestration import ChildRunSpec, RunContract, prepare_settings
from sciencediscovery.provenance import manifest_model_client
from sciencediscovery.runtime_core import (
    ConfigurationError,
    FanOutSink,
    Message,
    RunEvent,
    RunEventSink,
    RunRequest,
    RunResult,
    RuntimeBuilder,
    ToolSpec,
    TurnStarted,
)
from sciencediscovery.specialist import supervise_child_runs
from sciencediscovery.tools.compose import build_tools
from sciencediscovery.tools.registry import ToolRegistry

from ..runs import ComposedRun, durable_sink
from ..store import SessionRecord

if TYPE_CHECKING:
    from .platform import Platform

LEGACY_PROMPT_FACTORIES = (
    "orchestration.identity",
    "orchestration.governance",
    "orchestration.run_contract",
    "orchestration.skill_catalog",
)
"""The contributors whose sections make up the legacy (static) system prompt."""

SCRIPT_CURSOR = "scripted_turns_used"


class TurnTools:
    """The assembler's ``tools_provider``: the registry's governed tools at the current kernel turn.

    Deferred tools promoted during turn N become visible from turn N+1, so the
    provider follows ``TurnStarted`` events.
    """

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.turn = 1

    def emit(self, event: RunEvent) -> None:
        if isinstance(event, TurnStarted):
            self.turn = event.turn

    def __call__(self, scope: ContextScope) -> tuple[ToolSpec, ...]:
        return self.registry.visible_specs(self.turn)


@attrs.frozen
class RunPlan:
    """What a run is composed from: its session config resolved into concrete choices."""

    context_id: str
    scope: ContextScope
    mode: str
    model: str
    contract: RunContract
    max_turns: int
    history: tuple[Message, ...]
    child: ChildRunSpec | None = None


async def legacy_system_prompt(factories: Sequence[Any], scope: ContextScope, context_id: str) -> str:
    """The static system prompt of legacy mode: identity, governance, RunContract and Skill catalog,
    rendered by the same renderer as the dynamic prompt, without runtime projections."""
    request = ContributionRequest(context_id=context_id, run_id="legacy", turn=1, scope=scope, history=())
    sections: list[SystemSection] = []
    for factory in factories:
        if factory.id not in LEGACY_PROMPT_FACTORIES:
            continue
        contributor = factory.create(scope)
        if contributor is not None:
            sections.extend((await contributor.contribute(request)).sections)
    return DeterministicSystemPromptRenderer().render(tuple(sections))


class Composer:
    """Implements the service's RunComposer and orchestration's ChildRunFactory over one Platform."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform

    # -- RunComposer ------------------------------------------------------------
    async def compose(self, session: SessionRecord, history: tuple[Message, ...], sink: RunEventSink) -> ComposedRun:
        config = session.config
        plan = RunPlan(
            context_id=session.context_id,
            scope=ContextScope(config.get("scope", "main")),
            mode=config.get("mode", self.platform.settings.mode),
            model=self._model_of(session),
            contract=RunContract.from_mapping(session.structured_input),
            max_turns=int(config.get("max_turns", self.platform.settings.max_turns)),
            history=history,
        )
        return await self._compose(plan, sink, self.platform.store.resume_state(session.context_id))

    def _model_of(self, session: SessionRecord) -> str:
        model = session.config.get("model") or self.platform.settings.model
        if not model:
            raise ConfigurationError(
                "model", f"session {session.context_id!r} names no model and the service has no default model"
            )
        return str(model)

    async def _compose(self, plan: RunPlan, sink: RunEventSink, resume: Mapping[str, Any]) -> ComposedRun:
        platform = self.platform
        manager = platform.plugin_manager
        provider_client = platform.model_client(plan.model)
        provider = getattr(provider_client, "provider", None) or getattr(
            getattr(provider_client, "inner", None), "provider", None
        )
        scripted = provider if isinstance(provider, ScriptedProvider) else None
        if scripted is not None:
            scripted.turns_used = int(resume.get(SCRIPT_CURSOR, 0))
        settings = prepare_settings(manager, platform.run_settings(plan.contract, child_runs=self))
        if plan.child is not None:  # the child's contract and profile (its specialist identity, tools, turns)
            settings = plan.child.settings(settings)
        settings = supervise_child_runs(settings)  # specialist lifecycle, concurrency cap, brief contracts
        settings = prepare_data_sources(manager, settings)  # search providers
        model_client = manifest_model_client(provider_client, settings)
        everything = build_tools(manager, settings)
        tools = build_tools(
            manager, settings, allow=self._allowed(plan, settings, everything.registry), store=everything.store
        )
        settings = {**settings, "tool_registry": tools.registry}
        turn_tools = TurnTools(tools.registry)
        facts = resolve_model_facts(plan.model, platform.settings.environ)
        context_settings = attrs.evolve(
            ContextSettings.from_environ(platform.settings.environ, data_dir=platform.settings.data_dir),
            mode=plan.mode,
            model_max_tokens=facts.context_window,
            output_reserve_tokens=facts.max_output_tokens,
            trace=platform.settings.trace,
            trace_dir=platform.settings.resolved_trace_dir,
        )
        factories = discover_contributor_factories(manager, settings)
        prompt = await legacy_system_prompt(factories, plan.scope, plan.context_id)
        assembler = build_context_assembler(
            context_settings,
            tools_provider=turn_tools,
            system_prompt=lambda scope: prompt,
            summarizer=ModelSummarizer(model_client),
            scope=plan.scope,
            factories=factories,
            channels=discover_state_channels(manager, settings),
            estimator=TiktokenEstimator(facts.encoding) if facts.encoding else None,
        )
        sinks: list[Any] = [turn_tools, sink]
        if hasattr(assembler, "emit"):
            sinks.insert(0, assembler)
        sinks.extend(platform.event_sinks(settings))
        runtime = (
            RuntimeBuilder()
            .context_assembler(assembler)
            .model_client(model_client)
            .tool_dispatcher(tools.dispatcher)
            .event_sink(FanOutSink(sinks))
            .build()
        )
        return ComposedRun(
            runtime,
            max_turns=plan.max_turns,
            trace_dir=context_settings.trace_dir / safe_context_dir(plan.context_id)
            if context_settings.trace and context_settings.trace_dir
            else None,
            resume_state=(lambda: {SCRIPT_CURSOR: scripted.turns_used}) if scripted is not None else dict,
        )

    @staticmethod
    def _allowed(plan: RunPlan, settings: Mapping[str, Any], registry: ToolRegistry) -> list[str]:
        """The run's governed tool subset: a child's spec decides for it, the scope's profile otherwise."""
        definitions = [tool for name in registry.names if (tool := registry.get(name)) is not None]
        if plan.child is not None:
            return [tool.name for tool in plan.child.select_tools(definitions)]
        profile = settings["profiles"].for_scope(plan.scope.value)
        return [t.name for t in definitions if profile.allows_tool(t.name) and (t.read_only or not profile.read_only)]

    # -- ChildRunFactory ----------------------------------------------------------
    async def run_child(self, spec: ChildRunSpec) -> RunResult:
        """Run a subagent or reviewer as its own durable session (context id ``spec.context_id``)."""
        store = self.platform.store
        parent_model = self.platform.settings.model
        model = spec.profile.model or parent_model
        if not model:
            raise ValueError(f"child run {spec.context_id!r} has no model spec (profile {spec.scope.value} names none)")
        config: dict[str, Any] = {
            "scope": spec.scope.value,
            "mode": self.platform.settings.mode,
            "model": model,
            "max_turns": spec.max_turns,
            "parent": spec.parent.context_id if spec.parent else None,
            "specialist": spec.specialist,
        }
        session = store.create_session(spec.context_id, spec.contract.to_json(), config)
        store.append_step(session.context_id, spec.history)
        plan = RunPlan(
            context_id=spec.context_id,
            scope=ContextScope(spec.scope.value),
            mode=self.platform.settings.mode,
            model=model,
            contract=spec.contract,
            max_turns=spec.max_turns,
            history=spec.history,
            child=spec,
        )
        run_id = f"run-{uuid.uuid4().hex[:12]}"
        store.start_run(run_id, spec.context_id)
        try:
            composed = await self._compose(plan, durable_sink(store, lambda: composed), {})
            result = await composed.runtime.run(
                RunRequest(spec.context_id, spec.history, max_turns=spec.max_turns, run_id=run_id)
            )
        except asyncio.CancelledError:
            store.finish_run(run_id, "cancelled", "the parent run was cancelled", 0, {})
            raise
        except Exception as error:
            store.finish_run(run_id, "failed", f"{type(error).__name__}: {error}", 0, {})
            raise
        final = result.final_message.content if result.final_message else None
        store.finish_run(run_id, result.status.value, result.reason, result.turns, {"final_answer": final})
        return result
