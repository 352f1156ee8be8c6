"""Shared parts for the assembly tests: a scripted model, a tool dispatcher, channels and a kernel runner."""

from __future__ import annotations

import asyncio
import json
import types
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from sciencediscovery.context import (
    Contribution,
    Contributor,
    ContributorFactory,
    SystemSection,
)
from sciencediscovery.runtime_core import (
    CollectingSink,
    ContextOverflowError,
    FanOutSink,
    Message,
    ModelInput,
    ModelResponse,
    RunRequest,
    RunResult,
    RuntimeBuilder,
    ToolCall,
    ToolSpec,
    TurnContext,
)


class ScriptedModel:
    """Answers with scripted assistant messages; ``"overflow"`` raises a provider overflow."""

    def __init__(self, script: Sequence[Message | str]) -> None:
        self.script = list(script)
        self.inputs: list[ModelInput] = []

    async def complete(self, model_input: ModelInput, context: TurnContext) -> ModelResponse:
        self.inputs.append(model_input)
        step = self.script.pop(0) if self.script else Message.assistant("done")
        if step == "overflow":
            raise ContextOverflowError("prompt is too long", provider="scripted")
        assert isinstance(step, Message)
        return ModelResponse(step)


class Tools:
    """Runs calls with per-tool handlers; unknown tools echo their arguments."""

    def __init__(self, handlers: dict[str, Callable[[ToolCall], Any]] | None = None) -> None:
        self.handlers = handlers or {}

    async def dispatch(self, call: ToolCall, context: TurnContext) -> Message:
        handler = self.handlers.get(call.name)
        if handler is None:
            return Message.tool_result(call, json.dumps(dict(call.arguments)))
        value = handler(call)
        if asyncio.iscoroutine(value):
            value = await value
        return value if isinstance(value, Message) else Message.tool_result(call, str(value))


class PlanChannel:
    """A plan channel like orchestration's: state from update_plan, a protected plan_state section."""

    name = "plan"
    initial = None

    def apply(self, state: Any, call: ToolCall, result: Message) -> Any:
        return dict(call.arguments) if call.name == "update_plan" else state

    def render(self, state: Any) -> dict[str, Any] | None:
        return state

    def render_section(self, state: Any) -> SystemSection | None:
        if state is None:
            return None
        return SystemSection(
            "plan_state", "task_state", f"<plan_state>{json.dumps(state)}</plan_state>", protected=True
        )


class ListChannel:
    """Appends the name of every successful call (a channel that observes order)."""

    def __init__(self, name: str = "artifacts") -> None:
        self.name = name
        self.initial: tuple[str, ...] = ()

    def apply(self, state: tuple[str, ...], call: ToolCall, result: Message) -> tuple[str, ...]:
        return (*state, call.id)

    def render(self, state: tuple[str, ...]) -> dict[str, Any] | None:
        return {"calls": list(state)} if state else None


def section_factory(
    factory_id: str,
    section: SystemSection,
    *,
    scopes: Sequence[str] = ("main", "subagent", "reviewer"),
    required: bool = False,
) -> ContributorFactory:
    async def contribute(request: Any) -> Contribution:
        return Contribution(sections=[section])

    return ContributorFactory(
        factory_id, lambda scope: Contributor(factory_id, contribute, scopes=scopes, required=required)
    )


def run_kernel(
    assembler: Any, model: ScriptedModel, tools: Tools, history: Sequence[Message], *, max_turns: int = 10
) -> tuple[RunResult, CollectingSink]:
    sink = CollectingSink()
    sinks = [sink, assembler] if hasattr(assembler, "emit") else [sink]
    runtime = (
        RuntimeBuilder()
        .context_assembler(assembler)
        .model_client(model)
        .tool_dispatcher(tools)
        .event_sink(FanOutSink(sinks))
        .build()
    )
    result = asyncio.run(runtime.run(RunRequest("ctx-1", tuple(history), max_turns=max_turns, run_id="run-1")))
    return result, sink


TOOLS = [
    ToolSpec("search", "Search literature"),
    ToolSpec("update_plan", "Update the plan"),
    ToolSpec("read_tool_output"),
]


@pytest.fixture
def kit() -> types.SimpleNamespace:
    return types.SimpleNamespace(
        ScriptedModel=ScriptedModel,
        Tools=Tools,
        PlanChannel=PlanChannel,
        ListChannel=ListChannel,
        section_factory=section_factory,
        run_kernel=run_kernel,
        TOOLS=TOOLS,
        tools_provider=lambda scope: TOOLS,
    )
