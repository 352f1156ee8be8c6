"""Property tests of the agent loop over random scripts, completion orders, failures and cancellations."""

from __future__ import annotations

import asyncio

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sciencediscovery.runtime_core import (
    CollectingSink,
    Message,
    Role,
    RunEvent,
    RunRequest,
    RunStatus,
    RuntimeBuilder,
    ToolCall,
    ToolResultStatus,
    TurnContext,
    check_pairing,
)
from sciencediscovery.runtime_core.testing import ListModelClient, PassThroughAssembler, reply


@attrs.frozen
class CallPlan:
    delay: int  # how many times the tool yields before finishing: decides completion order
    fails: bool


call_plans = st.builds(CallPlan, delay=st.integers(0, 6), fails=st.booleans())
turn_plans = st.lists(call_plans, min_size=0, max_size=4)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[list[CallPlan]], int, int | None]:
    tool_turns = draw(st.lists(st.lists(call_plans, min_size=1, max_size=4), max_size=6))
    max_turns = draw(st.integers(1, 8))
    cancel_at = draw(st.none() | st.integers(0, 60))
    return tool_turns, max_turns, cancel_at


class PlannedDispatcher:
    def __init__(self, plans: dict[str, CallPlan]) -> None:
        self.plans = plans

    async def dispatch(self, call: ToolCall, context: TurnContext) -> Message:
        plan = self.plans[call.id]
        for _ in range(plan.delay):
            await asyncio.sleep(0)
        if plan.fails:
            raise RuntimeError(f"planned failure of {call.id}")
        return Message.tool_result(call, f"result of {call.id}")


class CancellingSink(CollectingSink):
    """Cancels the run when the n-th event is emitted (a random cancellation point)."""

    def __init__(self, cancel_at: int | None) -> None:
        super().__init__()
        self.cancel_at = cancel_at
        self.handle = None

    def emit(self, event: RunEvent) -> None:
        super().emit(event)
        if self.cancel_at is not None and len(self.events) == self.cancel_at and self.handle is not None:
            self.handle.cancel("cancelled by the test")


def _run(tool_turns: list[list[CallPlan]], max_turns: int, cancel_at: int | None):
    plans: dict[str, CallPlan] = {}
    script = []
    for turn_index, turn in enumerate(tool_turns):
        calls = []
        for call_index, plan in enumerate(turn):
            call_id = f"call-{turn_index}-{call_index}"
            plans[call_id] = plan
            calls.append(ToolCall(call_id, "work", {"n": call_index}))
        script.append(reply("", *calls))
    script.append(reply("final answer"))
    sink = CancellingSink(cancel_at)
    runtime = (
        RuntimeBuilder()
        .context_assembler(PassThroughAssembler())
        .model_client(ListModelClient(script))
        .tool_dispatcher(PlannedDispatcher(plans))
        .event_sink(sink)
        .build()
    )
    first = Message.user("start")

    async def main():
        handle = runtime.start(RunRequest("ctx", [first], max_turns=max_turns))
        sink.handle = handle
        return await handle.result()

    return asyncio.run(main()), sink, first


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_loop_invariants_hold_for_any_script(scenario) -> None:
    tool_turns, max_turns, cancel_at = scenario
    result, sink, first = _run(tool_turns, max_turns, cancel_at)

    # exactly one terminal result, announced once
    finished = sink.of_kind("run_finished")
    assert len(finished) == 1
    assert finished[0].status == result.status.value
    assert result.history[0] == first

    # no orphan call or result, ever
    check_pairing(result.history)

    # committed order equals declared order
    for index, message in enumerate(result.history):
        if message.role is Role.ASSISTANT and message.tool_calls:
            answered = [m.tool_call_id for m in result.history[index + 1 : index + 1 + len(message.tool_calls)]]
            assert answered == [call.id for call in message.tool_calls]
    committed = [event.call.id for event in sink.of_kind("tool_result_committed")]
    declared = [call.id for m in result.history if m.role is Role.ASSISTANT for call in m.tool_calls]
    assert committed == declared

    # a failing tool becomes an error result, never an orphan
    for message in result.history:
        if message.role is Role.TOOL and message.status is ToolResultStatus.ERROR:
            assert message.error_kind == "tool_exception"

    # the model-turn bound holds
    assert result.turns <= max_turns
    if result.status is RunStatus.TURN_LIMIT:
        assert result.turns == max_turns
        assert len(tool_turns) >= max_turns

    if result.status is RunStatus.CANCELLED:
        assert cancel_at is not None
    elif cancel_at is None or cancel_at > len(sink.events):
        # nothing interrupted the run: it completes iff the script ends within the bound
        expected = RunStatus.COMPLETED if len(tool_turns) < max_turns else RunStatus.TURN_LIMIT
        assert result.status is expected
        if expected is RunStatus.COMPLETED:
            assert result.final_message == Message.assistant("final answer")
