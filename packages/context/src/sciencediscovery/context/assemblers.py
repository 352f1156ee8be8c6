"""The three assembly modes behind runtime_core's ContextAssembler port.

``legacy`` (:class:`DefaultContextAssembler`): static system prompt,
message-count compaction, canonical history, no runtime projections.
``dynamic`` (:class:`DynamicContextAssembler`): the full pipeline.
``shadow`` (:class:`ShadowContextAssembler`): runs and traces the dynamic
candidate but sends the legacy input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from sciencediscovery.runtime_core import (
    AssembledContext,
    AssemblyRequest,
    Message,
    ModelInput,
    Role,
    RunEvent,
    RunFinished,
    ToolSpec,
)
from sciencediscovery.runtime_core.serialization import to_json

from .channels import RunStateChannels, StateChannel
from .checkpoint import Summarizer
from .compaction import CompactionReport, HistoryCompactor, compact_message_count
from .composer import DefaultContextMessageComposer
from .contributors import ContextContributorFactory, ContextScope, ContributionRequest
from .errors import ContextError
from .estimators import ConservativeTokenEstimator, TokenEstimator, TokenLedger
from .projection import RuntimeStateContributor
from .registry import Collection, ContextContributorRegistry
from .render import Admitted, DeterministicSystemPromptRenderer, apply_context_budget
from .settings import ContextSettings
from .state_store import RunStateStore
from .trace import TraceWriter
from .validator import ContextValidator
from .window import AtomicHistoryWindowPolicy

ToolsProvider = Callable[[ContextScope], Sequence[ToolSpec]]
"""The governed tools of a scope (the tool registry after deferred promotion)."""
PromptProvider = str | Callable[[ContextScope], str]
PLAN_CHANNEL = "plan"


@attrs.frozen
class Candidate:
    """One path's answer for one turn: canonical history, model input and trace fields."""

    history: tuple[Message, ...]
    model_input: ModelInput
    trace: dict[str, Any]


def _recovery(request: AssemblyRequest) -> dict[str, Any] | None:
    if not request.force_pressure:
        return None
    return {"attempt": request.recovery_attempt, "reason": request.recovery_reason}


def _write_trace(writer: TraceWriter | None, request: AssemblyRequest, document: Callable[[], dict[str, Any]]) -> None:
    """Build and write the trace document, only when tracing is on."""
    if writer is not None:
        writer.write(request.context_id, request.turn, request.recovery_attempt, document())


class DefaultContextAssembler:
    """The legacy path: static prompt, message-count compaction, canonical history, no projections.

    A forced pressure pass (after a provider overflow) halves the message bound.
    """

    def __init__(
        self,
        *,
        system_prompt: PromptProvider,
        tools_provider: ToolsProvider,
        scope: ContextScope = ContextScope.MAIN,
        max_messages: int = 1_000,
        trace_writer: TraceWriter | None = None,
    ) -> None:
        self.system_prompt = system_prompt
        self.tools_provider = tools_provider
        self.scope = ContextScope(scope)
        self.max_messages = max_messages
        self.trace_writer = trace_writer

    def build(self, request: AssemblyRequest) -> Candidate:
        bound = (
            max(2, min(self.max_messages, len(request.history) // 2)) if request.force_pressure else self.max_messages
        )
        history, dropped = compact_message_count(request.history, bound)
        prompt = self.system_prompt if isinstance(self.system_prompt, str) else self.system_prompt(self.scope)
        tools = tuple(self.tools_provider(self.scope))
        model_input = ModelInput(prompt, history, tools, metadata={"context_mode": "legacy", "scope": self.scope.value})
        trace = {
            "compaction": {"reason": "message_count" if dropped else None, "messageCountDropped": dropped},
            "recovery": _recovery(request),
        }
        return Candidate(history, model_input, trace)

    async def assemble(self, request: AssemblyRequest) -> AssembledContext:
        candidate = self.build(request)
        _write_trace(
            self.trace_writer,
            request,
            lambda: {
                "mode": "legacy",
                "scope": self.scope.value,
                "selectedPath": "legacy",
                **_identity(request),
                **candidate.trace,
                "llmInput": to_json(candidate.model_input),
            },
        )
        return AssembledContext(candidate.history, candidate.model_input)


def _identity(request: AssemblyRequest) -> dict[str, Any]:
    return {"contextId": request.context_id, "runId": request.run_id, "turn": request.turn}


@attrs.define
class _RunSession:
    registry: ContextContributorRegistry
    channels: RunStateChannels
    hydrated: bool = False


class DynamicContextAssembler:
    """The dynamic pipeline, per model turn (a forced recovery pass targets 3/4 of the limit):

    canonical history -> message-count compaction -> contributor collection ->
    budget admission -> deterministic prompt -> token pressure ->
    HistoryCompactor -> re-collect only if model-visible history changed ->
    message composer -> AtomicHistoryWindowPolicy -> ContextValidator -> ModelInput.

    It is also an event sink (``emit``): add it to the kernel's ``FanOutSink``
    so each run's state channels follow ``ToolResultCommitted`` events.
    """

    def __init__(
        self,
        *,
        settings: ContextSettings,
        tools_provider: ToolsProvider,
        summarizer: Summarizer,
        scope: ContextScope = ContextScope.MAIN,
        factories: Sequence[ContextContributorFactory] = (),
        channels: Sequence[StateChannel] = (),
        estimator: TokenEstimator | None = None,
        trace_writer: TraceWriter | None = None,
    ) -> None:
        self.settings = settings
        self.budget = settings.budget()
        self.tools_provider = tools_provider
        self.scope = ContextScope(scope)
        self.factories = tuple(factories)
        self.state = RunStateStore(channels)
        self.ledger = TokenLedger(estimator or ConservativeTokenEstimator())
        self.compactor = HistoryCompactor(summarizer, self.ledger, attempts=settings.summary_attempts)
        self.renderer = DeterministicSystemPromptRenderer()
        self.composer = DefaultContextMessageComposer()
        self.window = AtomicHistoryWindowPolicy()
        self.validator = ContextValidator()
        self.trace_writer = trace_writer
        self._sessions: dict[str, _RunSession] = {}

    # -- sink ---------------------------------------------------------------
    def emit(self, event: RunEvent) -> None:
        """Route run events to the run's state channels; forget a run when it finishes."""
        self.state.emit(event)
        if isinstance(event, RunFinished):
            self._sessions.pop(event.run_id, None)

    def channels_for(self, run_id: str) -> RunStateChannels:
        return self.state.for_run(run_id)

    def _session(self, request: AssemblyRequest) -> _RunSession:
        session = self._sessions.get(request.run_id)
        if session is None:
            channels = self.state.for_run(request.run_id)
            registry = ContextContributorRegistry(self.scope)
            for factory in self.factories:
                registry.register_factory(factory)
            registry.add(RuntimeStateContributor(channels))
            registry.freeze()
            session = self._sessions[request.run_id] = _RunSession(registry, channels)
        if not session.hydrated:
            session.channels.hydrate(request.history)
            session.hydrated = True
        return session

    # -- pipeline -----------------------------------------------------------
    async def _collect(
        self, session: _RunSession, request: AssemblyRequest, history: tuple[Message, ...], tools: tuple[ToolSpec, ...]
    ) -> tuple[Collection, Admitted, str]:
        collection = await session.registry.collect_detailed(
            ContributionRequest(
                context_id=request.context_id,
                run_id=request.run_id,
                turn=request.turn,
                scope=self.scope,
                history=history,
                channels=session.channels.snapshot(),
                tools=tools,
            )
        )
        admitted = apply_context_budget(
            collection, prompt_budget=self.budget.prompt, data_budget=self.budget.data, ledger=self.ledger
        )
        return collection, admitted, self.renderer.render(admitted.sections)

    async def build(self, request: AssemblyRequest, *, traced: bool = True) -> Candidate:
        """Run the pipeline; trace fields are only built when ``traced``."""
        session = self._session(request)
        budget = self.budget
        # a forced pass (after a provider overflow) also aims a quarter lower, so the retry is smaller
        target = budget.limit * 3 // 4 if request.force_pressure else budget.limit
        history, dropped = compact_message_count(request.history, self.settings.max_messages)
        tools = tuple(self.tools_provider(self.scope))
        collection, admitted, prompt = await self._collect(session, request, history, tools)
        fixed = self.ledger.text(prompt) + self.ledger.tools(tools) + admitted.data_tokens
        compaction = await self.compactor.compact(
            history,
            fixed_tokens=fixed,
            pressure=min(budget.pressure, target),
            limit=target,
            force=request.force_pressure,
            identity=(request.run_id, request.context_id, request.turn),
        )
        recollected = compaction.history is not history
        if recollected:
            history = compaction.history
            collection, admitted, prompt = await self._collect(session, request, history, tools)
            fixed = self.ledger.text(prompt) + self.ledger.tools(tools) + admitted.data_tokens
        window = self.window.select(history, target - fixed, self.ledger)
        messages = self.composer.compose(window.messages, admitted.messages)
        model_input = ModelInput(
            prompt, messages, tools, metadata={"context_mode": "dynamic", "scope": self.scope.value}
        )
        tokens = self.validator.validate(
            model_input,
            protected=[s for s in admitted.sections if s.is_protected],
            governed_tools={tool.name for tool in tools},
            limit=budget.limit,
            ledger=self.ledger,
        )
        if not traced:
            return Candidate(history, model_input, {})
        trace = {
            "tokenizer": self.ledger.name,
            "budgets": {**budget.as_json(), "windowTarget": target},
            "contributors": [
                {
                    "id": r.id,
                    "required": r.required,
                    "status": r.status,
                    "durationMs": r.duration_ms,
                    "error": r.error,
                    "output": to_json(r.output) if r.output is not None else None,
                }
                for r in collection.records
            ],
            "collection": {
                "sections": to_json(list(collection.sections)),
                "messages": [{"source": s, "message": to_json(m)} for s, m in collection.messages],
                "attachments": to_json(list(collection.attachments)),
                "diagnostics": to_json(list(collection.diagnostics)),
            },
            "admitted": {
                "sections": to_json(list(admitted.sections)),
                "messages": to_json(list(admitted.messages)),
                "diagnostics": to_json(list(admitted.diagnostics)),
                "promptTokens": admitted.prompt_tokens,
                "dataTokens": admitted.data_tokens,
            },
            "renderedContext": {
                "systemPrompt": prompt,
                "sectionIds": [s.id for s in admitted.sections],
                "history": to_json(list(messages)),
                "tools": to_json(list(tools)),
                "window": window.stats(),
                "windowDiagnostics": to_json(list(window.diagnostics)),
                "estimatedInputTokens": tokens,
            },
            "compaction": _compaction_trace(compaction.report, dropped, recollected, request),
            "planProgress": plan_progress(session.channels, messages, self.scope),
            "recovery": _recovery(request),
        }
        return Candidate(history, model_input, trace)

    async def assemble(self, request: AssemblyRequest) -> AssembledContext:
        try:
            candidate = await self.build(request, traced=self.trace_writer is not None)
        except ContextError as error:
            failure = self._failure(request, "dynamic", error)
            _write_trace(self.trace_writer, request, lambda: failure)
            raise
        _write_trace(
            self.trace_writer,
            request,
            lambda: {
                "mode": "dynamic",
                "scope": self.scope.value,
                "selectedPath": "dynamic",
                **_identity(request),
                **candidate.trace,
                "llmInput": to_json(candidate.model_input),
            },
        )
        return AssembledContext(candidate.history, candidate.model_input)

    def _failure(self, request: AssemblyRequest, mode: str, error: Exception) -> dict[str, Any]:
        return {
            "mode": mode,
            "scope": self.scope.value,
            "selectedPath": "dynamic",
            **_identity(request),
            "budgets": self.budget.as_json(),
            "recovery": _recovery(request),
            "error": {"type": type(error).__name__, "message": str(error)},
            "llmInput": None,
        }


def _compaction_trace(
    report: CompactionReport, dropped: int, recollected: bool, request: AssemblyRequest
) -> dict[str, Any]:
    summary = report.summary
    return {
        "reason": report.reason or ("message_count" if dropped else None),
        "estimatedTokensBefore": report.tokens_before,
        "estimatedTokensAfter": report.tokens_after,
        "messageCountDropped": dropped,
        "compactedToolOutputRefs": list(report.compacted_refs),
        "summaryPasses": len(report.summaries),
        "summary": None
        if summary is None
        else {
            "status": summary.status,
            "sourceTokens": summary.source_tokens,
            "sourceMessages": summary.source_messages,
            "checkpointTokens": summary.checkpoint_tokens,
            "attempts": summary.attempts,
            "rejections": summary.rejections,
            "errors": list(summary.errors),
            "validator": to_json(summary.report) if summary.report else None,
        },
        "summarizedMessages": report.summarized_messages,
        "recollected": recollected,
        "recovery": _recovery(request),
    }


def plan_progress(
    channels: RunStateChannels, messages: Sequence[Message], scope: ContextScope
) -> dict[str, Any] | None:
    """Observational progress of the active plan (``None`` without one).

    ``anchorFound`` says whether the declaring call is still visible to the
    model; only then are the step and result counters reported.
    """
    if not any(channel.name == PLAN_CHANNEL for channel in channels.channels):
        return None
    if channels.rendered().get(PLAN_CHANNEL) is None:
        return None
    anchor = channels.anchor(PLAN_CHANNEL)
    if anchor is None:
        return None
    progress: dict[str, Any] = {
        "scope": scope.value,
        "runId": channels.run_id,
        "toolCallId": anchor.call_id,
        "tool": anchor.tool,
    }
    position = next(
        (i for i, m in enumerate(messages) if any(call.id == anchor.call_id for call in m.tool_calls)), None
    )
    progress["anchorFound"] = position is not None
    if position is not None:
        plan_calls = channels.calls_of(PLAN_CHANNEL)
        later = messages[position + 1 :]
        progress["subsequentModelSteps"] = sum(1 for m in later if m.role is Role.ASSISTANT)
        progress["completedNonPlanToolResults"] = sum(
            1
            for m in later
            if m.role is Role.TOOL
            and m.status is not None
            and m.status.value == "ok"
            and m.tool_call_id not in plan_calls
        )
    return progress


class ShadowContextAssembler:
    """Runs every dynamic stage and traces its candidate, but sends the legacy input.

    The trace's ``renderedContext`` is the dynamic candidate and its
    ``llmInput`` the legacy input actually sent. A failing candidate is traced
    and does not stop the run.
    """

    def __init__(self, legacy: DefaultContextAssembler, dynamic: DynamicContextAssembler) -> None:
        self.legacy = legacy
        self.dynamic = dynamic
        self.trace_writer = dynamic.trace_writer or legacy.trace_writer

    def emit(self, event: RunEvent) -> None:
        self.dynamic.emit(event)

    async def assemble(self, request: AssemblyRequest) -> AssembledContext:
        selected = self.legacy.build(request)
        try:
            candidate = (await self.dynamic.build(request, traced=self.trace_writer is not None)).trace
        except ContextError as error:
            candidate = {"candidateError": {"type": type(error).__name__, "message": str(error)}}
        _write_trace(
            self.trace_writer,
            request,
            lambda: {
                "mode": "shadow",
                "scope": self.dynamic.scope.value,
                "selectedPath": "legacy",
                **_identity(request),
                **candidate,
                "legacy": selected.trace,
                "llmInput": to_json(selected.model_input),
            },
        )
        return AssembledContext(selected.history, selected.model_input)


def build_context_assembler(
    settings: ContextSettings,
    *,
    tools_provider: ToolsProvider,
    system_prompt: PromptProvider,
    summarizer: Summarizer,
    scope: ContextScope = ContextScope.MAIN,
    factories: Sequence[ContextContributorFactory] = (),
    channels: Sequence[StateChannel] = (),
    estimator: TokenEstimator | None = None,
) -> DefaultContextAssembler | DynamicContextAssembler | ShadowContextAssembler:
    """The assembler for ``settings.mode`` (legacy, shadow or dynamic), with its trace writer when tracing is on.

    Dynamic and shadow assemblers are also event sinks: add them to the
    kernel's ``FanOutSink`` so run-state channels follow committed tool results.
    """
    writer = TraceWriter(settings.trace_dir) if settings.trace and settings.trace_dir else None
    legacy = DefaultContextAssembler(
        system_prompt=system_prompt,
        tools_provider=tools_provider,
        scope=scope,
        max_messages=settings.max_messages,
        trace_writer=writer,
    )
    if settings.mode == "legacy":
        return legacy
    dynamic = DynamicContextAssembler(
        settings=settings,
        tools_provider=tools_provider,
        summarizer=summarizer,
        scope=scope,
        factories=factories,
        channels=channels,
        estimator=estimator,
        trace_writer=writer,
    )
    return dynamic if settings.mode == "dynamic" else ShadowContextAssembler(legacy, dynamic)
