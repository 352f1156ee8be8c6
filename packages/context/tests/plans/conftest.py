"""Deterministic parts for plan tests: a scripted ModelClient, compressors, selectors and plan builders."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from sciencediscovery.context.plans import (
    CancelSignal,
    CompressionJob,
    ContextFragment,
    ContextPlan,
    ContextRequest,
    ContextRun,
    HandlerContext,
    SelectionJob,
)
from sciencediscovery.runtime_core import CollectingSink, ExternalWaits, Message, ModelInput, ModelResponse, TurnContext


class ScriptedClient:
    """A real ModelClient: answers from a script (strings or exceptions), records every input it was sent."""

    def __init__(self, *answers: str | BaseException, hang: bool = False) -> None:
        self.answers = list(answers)
        self.inputs: list[ModelInput] = []
        self.cancelled = 0
        self.hang = hang
        self.entered = asyncio.Event()

    async def complete(self, model_input: ModelInput, context: TurnContext) -> ModelResponse:
        self.inputs.append(model_input)
        self.entered.set()
        if self.hang:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        answer = self.answers.pop(0) if self.answers else "ok"
        if isinstance(answer, BaseException):
            raise answer
        return ModelResponse(Message.assistant(answer))


class SummaryCompressor:
    """Summarizes the job's history field with one model call; records the jobs it received."""

    def __init__(self, field: str = "history", handler_id: str = "summary", max_calls: int = 1) -> None:
        self.id = handler_id
        self.field = field
        self.max_calls = max_calls
        self.jobs: list[CompressionJob] = []

    async def compress(self, job: CompressionJob, context: HandlerContext) -> Mapping[str, Any]:
        self.jobs.append(job)
        old = job.fragment.fields[self.field]
        text = "\n".join(entry["content"] for entry in old)
        response = await context.call_model(ModelInput("Summarize the conversation.", (Message.user(text),)))
        return {
            **job.fragment.fields,
            self.field: [{"role": "user", "content": f"Summary: {response.message.content}"}],
        }


class FunctionCompressor:
    """A local compressor (max_calls 0 by default) built from a function of the job."""

    def __init__(self, fn: Callable[[CompressionJob], Any], handler_id: str = "local", max_calls: int = 0) -> None:
        self.id = handler_id
        self.fn = fn
        self.max_calls = max_calls
        self.calls = 0

    async def compress(self, job: CompressionJob, context: HandlerContext) -> Any:
        self.calls += 1
        return self.fn(job)


class FunctionSelector:
    """A selector answering with a function of the job (may call the model through the context)."""

    def __init__(self, fn: Callable[[SelectionJob], Any], handler_id: str = "picker", max_calls: int = 0) -> None:
        self.id = handler_id
        self.fn = fn
        self.max_calls = max_calls
        self.jobs: list[SelectionJob] = []

    async def select(self, job: SelectionJob, context: HandlerContext) -> Any:
        self.jobs.append(job)
        return self.fn(job)


def entries(rounds: int, size: int = 40, unanswered: bool = False) -> list[dict[str, str]]:
    """``rounds`` user/assistant rounds of about ``size`` chars per message (plus an open question)."""
    result = []
    for n in range(rounds):
        result.append({"role": "user", "content": f"q{n} " + "x" * size})
        result.append({"role": "assistant", "content": f"a{n} " + "y" * size})
    if unanswered:
        result.append({"role": "user", "content": "what next?"})
    return result


def history_fragment(rounds: int, *, size: int = 40, max_chars: int | None = None, **kwargs: Any) -> ContextFragment:
    return ContextFragment(
        "history", "chat", "history", {"history": entries(rounds, size)}, max_chars=max_chars, **kwargs
    )


def instructions_fragment(text: str = "You are a careful reviewer.") -> ContextFragment:
    return ContextFragment("instructions", "app", "instructions", {"text": text})


def plan_of(*fragments: ContextFragment, processing: tuple[str, ...] = ("history",), **kwargs: Any) -> ContextPlan:
    return ContextPlan(fragments, processing_ids=processing, **kwargs)


def request(max_input_chars: int = 10_000, max_schema_chars: int = 10_000, **kwargs: Any) -> ContextRequest:
    return ContextRequest("req-1", max_input_chars, max_schema_chars, **kwargs)


def make_run(
    client: Any = None, *, max_model_calls: int = 10, timeout_s: float | None = None, cancel: CancelSignal | None = None
) -> tuple[ContextRun, CollectingSink, Any]:
    sink = CollectingSink()
    turn = TurnContext("run-1", "ctx-1", 1, sink, ExternalWaits("run-1", "ctx-1", sink.emit))
    client = client if client is not None else ScriptedClient()
    return ContextRun(client, turn, max_model_calls=max_model_calls, timeout_s=timeout_s, cancel=cancel), sink, client


@pytest.fixture(scope="session")
def kit() -> Any:
    """The helpers above as one namespace."""

    class Kit:
        pass

    for name, value in {
        "ScriptedClient": ScriptedClient,
        "SummaryCompressor": SummaryCompressor,
        "FunctionCompressor": FunctionCompressor,
        "FunctionSelector": FunctionSelector,
        "entries": staticmethod(entries),
        "history_fragment": staticmethod(history_fragment),
        "instructions_fragment": staticmethod(instructions_fragment),
        "plan_of": staticmethod(plan_of),
        "request": staticmethod(request),
        "make_run": staticmethod(make_run),
    }.items():
        setattr(Kit, name, value)
    return Kit()
