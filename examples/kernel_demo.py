"""A kernel-only demo: a scripted model asks for two tools at once, the loop runs them concurrently,
commits their results in declared order and finishes. Prints the events and the final history."""

from __future__ import annotations

import asyncio

from sciencediscovery.runtime_core import CollectingSink, Message, RunRequest, RuntimeBuilder, ToolCall
from sciencediscovery.runtime_core.testing import FunctionDispatcher, ListModelClient, PassThroughAssembler, reply


async def slow_search(arguments, context):
    await asyncio.sleep(0.05)
    return f"3 papers about {arguments['topic']}"


async def fast_count(arguments, context):
    return "42 rows"


async def main() -> None:
    sink = CollectingSink()
    runtime = (
        RuntimeBuilder()
        .context_assembler(PassThroughAssembler("You are a careful scientific assistant."))
        .model_client(
            ListModelClient(
                [
                    reply("", ToolCall("c1", "search", {"topic": "TP53"}), ToolCall("c2", "count", {})),
                    reply("Found 3 papers and 42 rows."),
                ]
            )
        )
        .tool_dispatcher(FunctionDispatcher({"search": slow_search, "count": fast_count}))
        .event_sink(sink)
        .build()
    )
    result = await runtime.run(RunRequest("demo", [Message.user("Survey TP53 evidence")], max_turns=4))
    for event in sink.events:
        print(f"event  {event.kind}")
    for message in result.history:
        print(f"{message.role.value:9} {message.tool_call_id or '':3} {message.content}")
    print(f"status: {result.status.value} ({result.reason}) after {result.turns} turns")


if __name__ == "__main__":
    asyncio.run(main())
