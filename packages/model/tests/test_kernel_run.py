"""A full kernel run driven by the scripted provider, recorded by RecordingModelClient."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

from sciencediscovery.model import ModelStreamDelta, ProviderModelClient, RecordingModelClient
from sciencediscovery.model import plugin as model_plugin
from sciencediscovery.runtime_core import (
    AssembledContext,
    AssemblyRequest,
    CollectingSink,
    Message,
    ModelInput,
    OverflowRecovery,
    Role,
    RunRequest,
    RunStatus,
    RuntimeBuilder,
    ToolCall,
    ToolResultStatus,
    ToolSpec,
    TurnContext,
    check_pairing,
    make_plugin_manager,
)
from sciencediscovery.runtime_core.serialization import event_to_json, from_json

TOOLS = (ToolSpec("read_skill", "Read a skill's instructions", {"type": "object"}),)


class WholeHistoryAssembler:
    """Sends the whole history; marks the forced pass after an overflow in the metadata."""

    async def assemble(self, request: AssemblyRequest) -> AssembledContext:
        metadata = {"forced": request.force_pressure}
        return AssembledContext(request.history, ModelInput("You are a scientist.", request.history, TOOLS, metadata))


class SkillDispatcher:
    """Answers read_skill; a call with unparseable arguments gets an error result the model can read."""

    async def dispatch(self, call: ToolCall, context: TurnContext) -> Message:
        if call.argument_error:
            return Message.tool_result(
                call, f"Invalid arguments: {call.argument_error}", status=ToolResultStatus.ERROR, error_kind="arguments"
            )
        return Message.tool_result(call, f"# {call.arguments['name']}\nSearch, screen, synthesize.")


SCRIPT = {
    "turns": [
        {
            "content": "Reading the skill.",
            "tool_calls": [{"id": "call-1", "name": "read_skill", "arguments": {"name": "literature-review"}}],
        },
        {"tool_calls": [{"id": "call-2", "name": "read_skill", "arguments": '{"name": '}]},
        {"error": "context_overflow", "message": "prompt is too long: 300000 tokens > 200000 maximum"},
        {"content": "TP53 resistance review: three mechanisms found."},
    ]
}


def test_scripted_model_drives_a_full_kernel_run_with_overflow_recovery(tmp_path: Path):
    script = tmp_path / "run.json"
    script.write_text(json.dumps(SCRIPT))
    manager = make_plugin_manager(load_entry_points=False, plugins=[model_plugin])
    recorder = RecordingModelClient(
        ProviderModelClient.from_spec(f"scripted:{script}", plugin_manager=manager, environ={})
    )
    sink = CollectingSink()
    runtime = (
        RuntimeBuilder()
        .context_assembler(WholeHistoryAssembler())
        .model_client(recorder)
        .tool_dispatcher(SkillDispatcher())
        .event_sink(sink)
        .build()
    )

    result = asyncio.run(runtime.run(RunRequest("ctx-1", [Message.user("Review TP53 resistance.")], max_turns=5)))

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.final_message is not None
    assert result.final_message.content == "TP53 resistance review: three mechanisms found."
    assert result.turns == 3
    check_pairing(result.history)
    assert [m.role for m in result.history] == [
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
    ]
    assert result.history[2].content.startswith("# literature-review")
    malformed = result.history[4]
    assert malformed.status is ToolResultStatus.ERROR and "not valid JSON" in malformed.content

    (recovery,) = [e for e in sink.events if isinstance(e, OverflowRecovery)]
    assert recovery.turn == 3 and "prompt is too long" in recovery.reason
    assert [(call.turn, call.model_input.metadata["forced"]) for call in recorder.calls] == [
        (1, False),
        (2, False),
        (3, False),
        (3, True),
    ]
    assert recorder.inputs[1].messages == result.history[:3]
    streamed = "".join(e.text for e in sink.events if isinstance(e, ModelStreamDelta))
    assert streamed == "Reading the skill.TP53 resistance review: three mechanisms found."

    kinds = {event_to_json(event)["kind"] for event in sink.events}
    assert {"model_stream_delta", "overflow_recovery", "run_finished"} <= kinds

    written = recorder.write_json(tmp_path / "inputs.json")
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    data = json.loads(written.read_text())
    assert [entry["turn"] for entry in data] == [1, 2, 3, 3]
    assert [from_json(entry["model_input"], ModelInput) for entry in data] == recorder.inputs
