"""Kernel overhead: 1,000 model turns with an instant model, each requesting one instant tool.

Prints the per-turn time through RuntimeBuilder's loop and, as a baseline in the
same run, a bare hand-written loop calling the same ports with no invariants,
events or accounting. The difference is the kernel's own overhead per turn.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from sciencediscovery.runtime_core import (
    Message,
    ModelResponse,
    NullSink,
    RunRequest,
    RuntimeBuilder,
    ToolCall,
    TurnContext,
)
from sciencediscovery.runtime_core.ports import AssemblyRequest
from sciencediscovery.runtime_core.testing import PassThroughAssembler
from sciencediscovery.runtime_core.waits import ExternalWaits

TURNS = 1000
REPEATS = 5


class InstantModel:
    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.calls = 0

    async def complete(self, model_input, context) -> ModelResponse:
        self.calls += 1
        if self.calls >= self.turns:
            return ModelResponse(Message.assistant("done"))
        return ModelResponse(Message.assistant("", [ToolCall(f"c{self.calls}", "noop")]))


class InstantDispatcher:
    async def dispatch(self, call: ToolCall, context: TurnContext) -> Message:
        return Message.tool_result(call, "ok")


async def kernel_run() -> float:
    runtime = (
        RuntimeBuilder()
        .context_assembler(PassThroughAssembler())
        .model_client(InstantModel(TURNS))
        .tool_dispatcher(InstantDispatcher())
        .event_sink(NullSink())
        .build()
    )
    started = time.perf_counter()
    result = await runtime.run(RunRequest("bench", [Message.user("go")], max_turns=TURNS))
    elapsed = time.perf_counter() - started
    assert result.turns == TURNS, result
    return elapsed


async def bare_run() -> float:
    assembler, model, dispatcher = PassThroughAssembler(), InstantModel(TURNS), InstantDispatcher()
    waits = ExternalWaits("bench", "bench", NullSink().emit)
    history: tuple[Message, ...] = (Message.user("go"),)
    started = time.perf_counter()
    for turn in range(1, TURNS + 1):
        assembled = await assembler.assemble(AssemblyRequest("bench", "bench", turn, history))
        context = TurnContext("bench", "bench", turn, NullSink(), waits)
        response = await model.complete(assembled.model_input, context)
        results = await asyncio.gather(*(dispatcher.dispatch(c, context) for c in response.message.tool_calls))
        history = history + (response.message, *results)
        if not response.message.tool_calls:
            break
    return time.perf_counter() - started


def main() -> None:
    kernel = [asyncio.run(kernel_run()) for _ in range(REPEATS)]
    bare = [asyncio.run(bare_run()) for _ in range(REPEATS)]
    k, b = statistics.median(kernel), statistics.median(bare)
    print(f"kernel loop: {TURNS} turns, median of {REPEATS} runs")
    print(f"  kernel per turn:          {k / TURNS * 1e6:8.1f} us")
    print(f"  bare loop per turn:       {b / TURNS * 1e6:8.1f} us  (baseline: same ports, no invariants)")
    print(f"  kernel overhead per turn: {(k - b) / TURNS * 1e6:8.1f} us  (ratio kernel/bare {k / b:.2f}x)")


if __name__ == "__main__":
    main()
