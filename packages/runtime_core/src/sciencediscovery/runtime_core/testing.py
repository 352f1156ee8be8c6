"""Small, real port implementations for tests, demos and benchmarks.

They are deliberately simple: a pass-through assembler, a model client that
answers from a list, and a dispatcher that calls plain async functions.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from .errors import RuntimeCoreError
from .history import Message, ToolCall, ToolSpec
from .model_io import ModelInput, ModelResponse
from .ports import AssembledContext, AssemblyRequest, TurnContext

ScriptStep = (
    ModelResponse | Exception | Callable[[ModelInput], ModelResponse] | Callable[[ModelInput], Awaitable[ModelResponse]]
)


class ScriptExhaustedError(RuntimeCoreError):
    """The scripted model was asked for more turns than its script holds."""


class PassThroughAssembler:
    """Sends canonical history unchanged; remembers every request it saw."""

    def __init__(self, system_prompt: str = "", tools: Sequence[ToolSpec] = ()) -> None:
        self.system_prompt = system_prompt
        self.tools = tuple(tools)
        self.requests: list[AssemblyRequest] = []

    async def assemble(self, request: AssemblyRequest) -> AssembledContext:
        self.requests.append(request)
        return AssembledContext(request.history, ModelInput(self.system_prompt, request.history, self.tools))


class ListModelClient:
    """Answers each call with the next step of a script.

    A step is a :class:`ModelResponse`, an exception to raise, or a function
    (plain or async) of the model input returning a response; an async step
    can block or check what the model was sent.
    """

    def __init__(self, script: Iterable[ScriptStep]) -> None:
        self.script = list(script)
        self.inputs: list[ModelInput] = []

    async def complete(self, model_input: ModelInput, context: TurnContext) -> ModelResponse:
        self.inputs.append(model_input)
        index = len(self.inputs) - 1
        if index >= len(self.script):
            raise ScriptExhaustedError(f"scripted model has {len(self.script)} steps; call {index + 1} has none")
        step = self.script[index]
        if isinstance(step, Exception):
            raise step
        if isinstance(step, ModelResponse):
            return step
        answer = step(model_input)
        return await answer if inspect.isawaitable(answer) else answer


def reply(text: str = "", *calls: ToolCall) -> ModelResponse:
    """Shorthand for a scripted assistant response."""
    return ModelResponse(Message.assistant(text, calls))


ToolFunction = Callable[[Mapping[str, Any], TurnContext], Awaitable[str]]


class FunctionDispatcher:
    """Dispatches each call to an async function ``(arguments, context) -> str`` chosen by tool name."""

    def __init__(self, functions: Mapping[str, ToolFunction]) -> None:
        self.functions = dict(functions)

    async def dispatch(self, call: ToolCall, context: TurnContext) -> Message:
        function = self.functions.get(call.name)
        if function is None:
            raise KeyError(f"no tool named {call.name!r}")
        return Message.tool_result(call, await function(call.arguments, context))
