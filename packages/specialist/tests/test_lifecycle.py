"""Every lifecycle transition, the cancellation cascade, the turn limit and the concurrency cap."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sciencediscovery.orchestration import SpecialistDefinition
from sciencediscovery.runtime_core import ConfigurationError, Message, RunRequest, RunStatus, ToolCall, hookimpl
from sciencediscovery.specialist import (
    TERMINAL_STATES,
    TRANSITIONS,
    LifecycleError,
    SpecialistRunner,
    SubagentState,
    supervise_child_runs,
)
from sciencediscovery.specialist.lifecycle import check_transition
from sciencediscovery.tools.definitions import ToolDefinition

from .conftest import reply

TASK = {"objective": "Summarise the assay data"}


def states_of(run, child_context_id: str) -> list[str]:
    return [e.state for e in run.sink.of_kind("subagent_state_changed") if e.child_context_id == child_context_id]


def test_a_completed_delegation_goes_created_running_completed_and_the_channel_records_it(harness) -> None:
    script = [reply("", ToolCall("call-1", "task", TASK)), reply("Done.")]
    result, run, _ = harness.run_main(harness.manager(), script, {"subagent": [reply("The brief.")]})
    assert result.status is RunStatus.COMPLETED
    events = [e for e in run.sink.of_kind("subagent_state_changed")]
    assert [(e.previous, e.state) for e in events] == [
        (None, "created"),
        ("created", "running"),
        ("running", "completed"),
    ]
    assert {(e.run_id, e.context_id, e.child_context_id) for e in events} == {
        ("run-main", "ctx-main", "ctx-main/task-call-1")
    }
    assert events[-1].child_run_id == "run-1-subagent"
    record = run.runner.records["ctx-main/task-call-1"]
    assert record.state is SubagentState.COMPLETED and run.runner.active() == ()
    [delegation] = run.channels.snapshot()["delegations"]
    assert (delegation.status, delegation.run_id, delegation.brief) == ("completed", "run-1-subagent", "The brief.")


class DecisionTool:
    """A tool that waits on an outside decision (as a permission request or remote job does)."""

    def __init__(self) -> None:
        self.decided = asyncio.Event()

    @hookimpl
    def register_tools(self, register, settings):
        async def handler(invocation):
            async with invocation.context.waits.external("permission", "write_file(results/table.csv)"):
                await self.decided.wait()
            return "approved"

        register(ToolDefinition("await_decision", "Wait for a decision", {"type": "object"}, handler, read_only=True))


def test_an_external_wait_in_the_child_is_the_waiting_state_then_running_again(harness) -> None:
    tool = DecisionTool()
    manager = harness.manager(tool)
    script = [reply("", ToolCall("call-1", "task", TASK)), reply("Done.")]
    child = [reply("", ToolCall("c-1", "await_decision", {})), reply("Approved brief.")]
    runtime, run, _ = harness.main_run(manager, script, {"subagent": child})

    async def scenario():
        handle = runtime.start(RunRequest("ctx-main", [Message.user("go")], run_id="run-main"))
        await harness.until(lambda: "ctx-main/task-call-1" in run.runner.records)
        await harness.until(lambda: run.runner.records["ctx-main/task-call-1"].state is SubagentState.WAITING)
        waiting = run.runner.records["ctx-main/task-call-1"].transitions[-1]
        tool.decided.set()
        return waiting, await handle.result()

    waiting, result = asyncio.run(scenario())
    assert waiting.detail == "permission: write_file(results/table.csv)"
    assert result.status is RunStatus.COMPLETED
    assert states_of(run, "ctx-main/task-call-1") == ["created", "running", "waiting", "running", "completed"]


def test_a_child_that_fails_is_failed_and_the_parent_run_goes_on(harness) -> None:
    script = [reply("", ToolCall("call-1", "task", TASK)), reply("Done.")]
    result, run, _ = harness.run_main(harness.manager(), script, {"subagent": [RuntimeError("provider down")]})
    assert result.status is RunStatus.COMPLETED
    assert states_of(run, "ctx-main/task-call-1") == ["created", "running", "failed"]
    assert result.history[2].content.startswith("Subagent run ended with status failed: RuntimeError: provider down")
    assert result.history[2].metadata["delegation"]["status"] == "failed"  # recorded in the delegations channel


def test_a_factory_that_cannot_start_the_child_is_a_failed_delegation_naming_the_error(harness) -> None:
    script = [reply("", ToolCall("call-1", "task", TASK)), reply("Done.")]
    result, run, _ = harness.run_main(harness.manager(), script, {})  # no child model configured: KeyError
    assert states_of(run, "ctx-main/task-call-1") == ["created", "running", "failed"]
    last = run.runner.records["ctx-main/task-call-1"].transitions[-1]
    assert last.detail.startswith("the child run could not be run: KeyError")
    assert "Subagent run ended with status failed" in result.history[2].content


class TightBudget:
    @hookimpl
    def register_specialists(self, register, settings):
        register(
            SpecialistDefinition(
                name="one-turn",
                description="Has one turn",
                identity="You have one turn.",
                tools=("read_file",),
                max_turns=1,
                output_contract="Anything",
            )
        )


def test_a_child_out_of_turns_is_turn_limit(harness) -> None:
    script = [reply("", ToolCall("call-1", "task", {**TASK, "specialist": "one-turn"})), reply("Done.")]
    child = [reply("", ToolCall("c-1", "read_file", {"path": "data/assay.csv"}))]
    result, run, _ = harness.run_main(harness.manager(harness.LabTools(), TightBudget()), script, {"one-turn": child})
    assert states_of(run, "ctx-main/task-call-1") == ["created", "running", "turn_limit"]
    assert run.channels.snapshot()["delegations"][0].status == "turn_limit"
    assert result.history[2].content.startswith("Subagent run ended with status turn_limit")


def three_delegations() -> list:
    calls = [ToolCall(f"call-{i}", "task", {"objective": f"Part {i}"}) for i in (1, 2, 3)]
    return [reply("", *calls), reply("Done.")]


def test_children_of_one_turn_run_under_the_concurrency_cap(harness) -> None:
    release = asyncio.Event()
    gate = harness.Gate(reply("brief"), release)
    script = three_delegations()
    runtime, run, factory = harness.main_run(
        harness.manager(), script, {"subagent": [gate, gate, gate]}, {"specialist_max_concurrent": 2}
    )

    async def scenario():
        handle = runtime.start(RunRequest("ctx-main", [Message.user("go")], run_id="run-main"))
        await harness.until(lambda: gate.entered == 2)
        for _ in range(50):  # give a third child every chance to start
            await asyncio.sleep(0)
        snapshot = sorted(record.state.value for record in run.runner.active())
        entered = gate.entered
        release.set()
        return snapshot, entered, await handle.result()

    snapshot, entered, result = asyncio.run(scenario())
    assert (snapshot, entered) == (["created", "running", "running"], 2)
    assert result.status is RunStatus.COMPLETED and len(factory.specs) == 3
    running, most = 0, 0
    for event in run.sink.of_kind("subagent_state_changed"):
        running += {"running": 1, "completed": -1}.get(event.state, 0)
        most = max(most, running)
    assert most == 2
    assert [d.status for d in run.channels.snapshot()["delegations"]] == ["completed"] * 3


def test_a_cancelled_parent_cancels_its_running_and_queued_children(harness) -> None:
    never = asyncio.Event()
    gate = harness.Gate(reply("never"), never)
    runtime, run, factory = harness.main_run(
        harness.manager(), three_delegations(), {"subagent": [gate, gate, gate]}, {"specialist_max_concurrent": 2}
    )

    async def scenario():
        handle = runtime.start(RunRequest("ctx-main", [Message.user("go")], run_id="run-main"))
        await harness.until(lambda: gate.entered == 2)
        handle.cancel("the user stopped the run")
        return await handle.result()

    result = asyncio.run(scenario())
    assert result.status is RunStatus.CANCELLED
    assert [states_of(run, f"ctx-main/task-call-{i}") for i in (1, 2, 3)] == [
        ["created", "running", "cancelled"],
        ["created", "running", "cancelled"],
        ["created", "cancelled"],
    ]
    assert len(factory.specs) == 2  # the queued child never started
    for child in factory.runs.values():
        [finished] = child.sink.of_kind("run_finished")
        assert finished.status == "cancelled"
    assert run.runner.active() == ()


def test_the_cap_setting_is_validated_naming_the_key(harness) -> None:
    with pytest.raises(ConfigurationError) as caught:
        supervise_child_runs({"child_run_factory": _Factory(), "specialist_max_concurrent": 0})
    assert caught.value.variable == "specialist_max_concurrent"
    settings = supervise_child_runs({"child_run_factory": _Factory(), "specialist_max_concurrent": 5})
    assert settings["child_run_factory"].max_concurrent == 5
    assert supervise_child_runs(settings)["child_run_factory"] is settings["child_run_factory"]
    assert "child_run_factory" not in supervise_child_runs({})
    with pytest.raises(ConfigurationError) as caught:
        SpecialistRunner(_Factory(), brief_chars=0)
    assert caught.value.variable == "brief_chars"


class _Factory:
    async def run_child(self, spec):
        raise NotImplementedError


@given(st.lists(st.sampled_from(list(SubagentState)), max_size=8))
def test_only_lifecycle_edges_are_accepted_and_terminal_states_are_final(path) -> None:
    state = SubagentState.CREATED
    for target in path:
        if target in TRANSITIONS[state]:
            check_transition(state, target, "ctx")
            state = target
        else:
            with pytest.raises(LifecycleError, match=f"from {state.value} to {target.value}"):
                check_transition(state, target, "ctx")
    assert all(not TRANSITIONS[terminal] for terminal in TERMINAL_STATES)
    assert {s for targets in TRANSITIONS.values() for s in targets} == set(SubagentState) - {SubagentState.CREATED}


def test_the_cancellation_cascade_reaches_grandchildren(harness) -> None:
    gate = harness.Gate(reply("never"), asyncio.Event())
    settings = {"profiles": {"subagent": {"denied_tools": ["review_checkpoint"]}}}  # subagents may delegate
    script = [reply("", ToolCall("call-1", "task", {"objective": "Delegate further"})), reply("Done.")]
    child_script = [reply("", ToolCall("c-1", "task", {"objective": "The deep part"})), gate]
    runtime, run, factory = harness.main_run(harness.manager(), script, {"subagent": child_script}, settings)
    factory.base_settings["child_run_factory"] = factory  # each child composes its own runner around it

    async def scenario():
        handle = runtime.start(RunRequest("ctx-main", [Message.user("go")], run_id="run-main"))
        await harness.until(lambda: gate.entered == 1)
        handle.cancel()
        return await handle.result()

    assert asyncio.run(scenario()).status is RunStatus.CANCELLED
    child = factory.runs["ctx-main/task-call-1"]
    assert states_of(run, "ctx-main/task-call-1") == ["created", "running", "cancelled"]
    assert states_of(child, "ctx-main/task-call-1/task-c-1") == ["created", "running", "cancelled"]
    for descendant in factory.runs.values():
        assert [e.status for e in descendant.sink.of_kind("run_finished")] == ["cancelled"]
    assert len(factory.runs) == 2
