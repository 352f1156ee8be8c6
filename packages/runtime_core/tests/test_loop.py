"""The loop's behaviour at each boundary: overflow, cancellation, waits, bad ports."""

from __future__ import annotations

import asyncio

import pytest

from sciencediscovery.runtime_core import (
    AssembledContext,
    AssemblyRequest,
    CollectingSink,
    ContextOverflowError,
    Message,
    ModelInput,
    RunRequest,
    RunStatus,
    RuntimeBuilder,
    ToolCall,
    ToolResultStatus,
    TurnContext,
    check_pairing,
)
from sciencediscovery.runtime_core.testing import FunctionDispatcher, ListModelClient, PassThroughAssembler, reply


def build(script, functions=None, assembler=None, sink=None):
    sink = sink or CollectingSink()
    assembler = assembler or PassThroughAssembler()
    model = ListModelClient(script)

    async def echo(arguments, context):
        return f"echo {dict(arguments)}"

    runtime = (
        RuntimeBuilder()
        .context_assembler(assembler)
        .model_client(model)
        .tool_dispatcher(FunctionDispatcher(functions or {"echo": echo}))
        .event_sink(sink)
        .build()
    )
    return runtime, model, assembler, sink


def run(runtime, history=None, max_turns=10):
    return asyncio.run(runtime.run(RunRequest("ctx-1", history or [Message.user("go")], max_turns=max_turns)))


def test_first_overflow_triggers_one_forced_pass_and_one_retry():
    runtime, model, assembler, sink = build([ContextOverflowError("prompt is too long"), reply("done")])
    result = run(runtime)
    assert result.status is RunStatus.COMPLETED
    assert [r.force_pressure for r in assembler.requests] == [False, True]
    assert assembler.requests[1].recovery_attempt == 1
    assert assembler.requests[1].recovery_reason == "prompt is too long"
    assert assembler.requests[1].turn == assembler.requests[0].turn == 1
    assert len(model.inputs) == 2
    assert [e.attempt for e in sink.of_kind("overflow_recovery")] == [1]


def test_second_overflow_fails_the_run_with_a_clear_reason():
    runtime, model, assembler, sink = build([ContextOverflowError("too long"), ContextOverflowError("still too long")])
    result = run(runtime)
    assert result.status is RunStatus.FAILED
    assert "context overflow persisted after one forced recovery pass" in result.reason
    assert "still too long" in result.reason
    assert result.error_type == "ContextOverflowError"
    assert len(model.inputs) == 2  # never a loop
    assert len(sink.of_kind("run_finished")) == 1


def test_overflow_budget_is_per_turn():
    calls = [ToolCall("c1", "echo", {})]
    script = [ContextOverflowError("a"), reply("", *calls), ContextOverflowError("b"), reply("done")]
    result = run(build(script)[0])
    assert result.status is RunStatus.COMPLETED


def test_tool_exception_becomes_error_result_and_run_continues():
    async def boom(arguments, context):
        raise ValueError("disk on fire")

    runtime, *_ = build([reply("", ToolCall("c1", "boom")), reply("done")], {"boom": boom})
    result = run(runtime)
    assert result.status is RunStatus.COMPLETED
    tool_result = result.history[2]
    assert tool_result.status is ToolResultStatus.ERROR
    assert tool_result.error_kind == "tool_exception"
    assert "disk on fire" in tool_result.content


def test_cancel_during_tools_commits_cancelled_results_for_open_calls():
    started = asyncio.Event()

    async def slow(arguments, context):
        started.set()
        await asyncio.sleep(3600)
        return "never"

    async def fast(arguments, context):
        return "quick"

    runtime, *_ = build([reply("", ToolCall("a", "fast"), ToolCall("b", "slow"))], {"fast": fast, "slow": slow})

    async def main():
        handle = runtime.start(RunRequest("ctx", [Message.user("go")]))
        await started.wait()
        assert handle.status == "running"
        handle.cancel("user pressed stop")
        return await handle.result()

    result = asyncio.run(main())
    assert result.status is RunStatus.CANCELLED
    assert result.reason == "user pressed stop"
    check_pairing(result.history)
    assert [m.status for m in result.history[2:]] == [ToolResultStatus.OK, ToolResultStatus.CANCELLED]


def test_cancelling_the_caller_cancels_the_run_and_reraises():
    started = asyncio.Event()
    seen = CollectingSink()

    async def slow(arguments, context):
        started.set()
        await asyncio.sleep(3600)
        return "never"

    runtime, *_ = build([reply("", ToolCall("a", "slow"))], {"slow": slow}, sink=seen)

    async def main():
        task = asyncio.create_task(runtime.run(RunRequest("ctx", [Message.user("go")])))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    (finished,) = seen.of_kind("run_finished")
    assert finished.status == "cancelled"
    (step,) = seen.of_kind("step_committed")
    assert step.messages[-1].status is ToolResultStatus.CANCELLED


def test_cancel_while_waiting_for_the_model():
    class HangingModel:
        def __init__(self):
            self.entered = asyncio.Event()

        async def complete(self, model_input, context):
            self.entered.set()
            await asyncio.sleep(3600)

    model = HangingModel()
    runtime = (
        RuntimeBuilder()
        .context_assembler(PassThroughAssembler())
        .model_client(model)
        .tool_dispatcher(FunctionDispatcher({}))
        .event_sink(CollectingSink())
        .build()
    )

    async def main():
        handle = runtime.start(RunRequest("ctx", [Message.user("go")]))
        await model.entered.wait()
        handle.cancel()
        return await handle.result()

    result = asyncio.run(main())
    assert result.status is RunStatus.CANCELLED
    assert result.history == (Message.user("go"),)


def test_external_wait_is_accounted_apart_from_model_time():
    async def needs_permission(arguments, context: TurnContext):
        async with context.waits.external("permission", "read_file(data/x.csv)"):
            await asyncio.sleep(0.05)
        return "read"

    runtime, model, assembler, sink = build(
        [reply("", ToolCall("c1", "needs_permission")), reply("done")], {"needs_permission": needs_permission}
    )
    result = run(runtime)
    assert result.timings.external_wait_s >= 0.05
    assert result.timings.model_s < result.timings.external_wait_s
    (started,) = sink.of_kind("external_wait_started")
    (finished,) = sink.of_kind("external_wait_finished")
    assert started.wait_kind == "permission"
    assert started.detail == "read_file(data/x.csv)"
    assert finished.wait_id == started.wait_id
    assert finished.turn == 1


def test_status_is_waiting_during_an_external_wait():
    release = asyncio.Event()
    inside = asyncio.Event()

    async def ask(arguments, context):
        async with context.waits.external("permission", "x"):
            inside.set()
            await release.wait()
        return "ok"

    runtime, *_ = build([reply("", ToolCall("c1", "ask")), reply("done")], {"ask": ask})

    async def main():
        handle = runtime.start(RunRequest("ctx", [Message.user("go")]))
        await inside.wait()
        assert handle.status == "waiting"
        release.set()
        result = await handle.result()
        assert handle.status == "completed"
        return result

    assert asyncio.run(main()).status is RunStatus.COMPLETED


def test_turn_bound_is_enforced():
    script = [reply("", ToolCall(f"c{i}", "echo")) for i in range(5)]
    result = run(build(script)[0], max_turns=3)
    assert result.status is RunStatus.TURN_LIMIT
    assert result.turns == 3
    assert "3" in result.reason
    check_pairing(result.history)


def test_duplicate_call_id_in_one_turn_is_a_typed_failure_and_history_stays_consistent():
    result = run(build([reply("", ToolCall("same", "echo"), ToolCall("same", "echo"))])[0])
    assert result.status is RunStatus.FAILED
    assert result.error_type == "DuplicateToolCallIdError"
    assert "'same'" in result.reason
    assert result.history == (Message.user("go"),)


def test_reused_call_id_across_turns_is_rejected():
    script = [reply("", ToolCall("c1", "echo")), reply("", ToolCall("c1", "echo"))]
    result = run(build(script)[0])
    assert result.status is RunStatus.FAILED
    assert result.error_type == "DuplicateToolCallIdError"
    check_pairing(result.history)
    assert len(result.history) == 3


def test_dispatcher_answering_another_call_fails_the_run_with_history_paired():
    class WrongDispatcher:
        async def dispatch(self, call, context):
            return Message.tool_result(ToolCall("someone-else", call.name), "stolen")

    runtime = (
        RuntimeBuilder()
        .context_assembler(PassThroughAssembler())
        .model_client(ListModelClient([reply("", ToolCall("c1", "echo")), reply("done")]))
        .tool_dispatcher(WrongDispatcher())
        .event_sink(CollectingSink())
        .build()
    )
    result = run(runtime)
    assert result.status is RunStatus.FAILED
    assert result.error_type == "DispatcherContractError"
    assert "'c1'" in result.reason and "'someone-else'" in result.reason
    check_pairing(result.history)
    assert result.history[-1].error_kind == "dispatcher_contract"


def test_assembler_breaking_pairing_fails_the_run():
    class OrphanMaker:
        async def assemble(self, request: AssemblyRequest):
            bad = (*request.history, Message.tool_result(ToolCall("ghost", "x"), "orphan"))
            return AssembledContext(bad, ModelInput("", bad))

    runtime = (
        RuntimeBuilder()
        .context_assembler(OrphanMaker())
        .model_client(ListModelClient([reply("done")]))
        .tool_dispatcher(FunctionDispatcher({}))
        .event_sink(CollectingSink())
        .build()
    )
    result = run(runtime)
    assert result.status is RunStatus.FAILED
    assert result.error_type == "AssemblerContractError"
    assert result.history == (Message.user("go"),)


def test_compacted_history_from_assembler_becomes_canonical():
    class Compactor:
        async def assemble(self, request):
            kept = request.history[-1:]
            return AssembledContext(kept, ModelInput("", kept))

    sink = CollectingSink()
    runtime = (
        RuntimeBuilder()
        .context_assembler(Compactor())
        .model_client(ListModelClient([reply("done")]))
        .tool_dispatcher(FunctionDispatcher({}))
        .event_sink(sink)
        .build()
    )
    result = run(runtime, history=[Message.user("old"), Message.assistant("old answer"), Message.user("new")])
    assert result.history == (Message.user("new"), Message.assistant("done"))
    (replaced,) = sink.of_kind("history_replaced")
    assert replaced.history == (Message.user("new"),)


def test_interrupted_history_is_closed_before_the_first_turn():
    open_call = ToolCall("left-open", "echo")
    history = [Message.user("go"), Message.assistant("", [open_call])]
    runtime, model, assembler, sink = build([reply("done")])
    result = run(runtime, history=history)
    assert result.status is RunStatus.COMPLETED
    closed = result.history[2]
    assert closed.tool_call_id == "left-open"
    assert closed.status is ToolResultStatus.CANCELLED
    assert closed.error_kind == "interrupted"
    check_pairing(assembler.requests[0].history)


def test_model_error_fails_run_with_its_message():
    result = run(build([RuntimeError("provider unreachable")])[0])
    assert result.status is RunStatus.FAILED
    assert result.reason == "RuntimeError: provider unreachable"


def test_events_follow_the_lifecycle():
    runtime, model, assembler, sink = build([reply("", ToolCall("c1", "echo", {"x": 1})), reply("done")])
    run(runtime)
    kinds = [e.kind for e in sink.events]
    assert kinds == [
        "run_started",
        "turn_started",
        "model_output",
        "tool_started",
        "tool_finished",
        "tool_result_committed",
        "step_committed",
        "turn_started",
        "model_output",
        "step_committed",
        "run_finished",
    ]


def test_a_continued_run_numbers_its_turns_after_earlier_runs_and_bounds_only_its_own():
    runtime, model, assembler, sink = build([reply("", ToolCall("c1", "echo")), reply("", ToolCall("c2", "echo"))])
    request = RunRequest("ctx-1", [Message.user("go")], max_turns=1, first_turn=7)
    result = asyncio.run(runtime.run(request))
    assert result.status is RunStatus.TURN_LIMIT
    assert result.turns == 1
    assert [e.turn for e in sink.of_kind("turn_started")] == [7]
    assert [r.turn for r in assembler.requests] == [7]
    assert [e.turn for e in sink.of_kind("step_committed")] == [7]


def test_a_tool_leaking_its_own_cancelled_error_is_an_error_result_not_a_cancelled_run():
    async def leaky(arguments, context):
        raise asyncio.CancelledError("an SDK's internal timeout")

    runtime, *_ = build([reply("", ToolCall("c1", "leaky")), reply("done")], {"leaky": leaky})
    result = run(runtime)
    assert result.status is RunStatus.COMPLETED
    assert result.history[2].status is ToolResultStatus.ERROR
    assert result.history[2].error_kind == "tool_exception"


def test_a_failing_sink_stops_every_running_tool_before_the_terminal_result():
    finished: list[str] = []

    async def slow(arguments, context):
        await asyncio.sleep(0.2)
        finished.append(arguments["name"])
        return "done"

    class BrokenSink(CollectingSink):
        def emit(self, event):
            super().emit(event)
            if event.kind == "tool_started" and len(self.of_kind("tool_started")) == 2:
                raise OSError("log disk full")

    sink = BrokenSink()
    runtime, *_ = build(
        [reply("", ToolCall("a", "slow", {"name": "a"}), ToolCall("b", "slow", {"name": "b"}))],
        {"slow": slow},
        sink=sink,
    )

    async def main():
        result = await runtime.run(RunRequest("ctx", [Message.user("go")]))
        await asyncio.sleep(0.4)  # a tool left running would finish now
        return result

    result = asyncio.run(main())
    assert result.status is RunStatus.FAILED
    assert "log disk full" in result.reason
    assert finished == []
    check_pairing(result.history)
    assert [e.kind for e in sink.events][-1] == "run_finished"


def test_scripted_model_steps_may_be_async_functions_of_the_input():
    seen = []

    async def check(model_input):
        seen.append(model_input.messages[-1].content)
        return reply("checked")

    result = run(build([check])[0], history=[Message.user("look at me")])
    assert result.final_message == Message.assistant("checked")
    assert seen == ["look at me"]
