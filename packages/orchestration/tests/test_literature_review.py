"""The spec's literature-review scenario on a kernel run: real registry, dispatcher and DynamicContextAssembler,
scripted model."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sciencediscovery.context import ContextScope, ContextSettings
from sciencediscovery.runtime_core import Message, ModelInput, Role, RunRequest, RunStatus, ToolCall
from sciencediscovery.runtime_core.testing import reply

CONTRACT = {
    "objective": "Review current evidence about TP53 resistance mechanisms",
    "constraints": ["Use selected literature skill", "Do not execute ungoverned tools"],
    "outputRequirements": ["Cited summary", "State uncertainty"],
}
PLAN = {
    "explanation": "TP53 resistance evidence review",
    "items": [
        {"step": "search", "status": "in_progress"},
        {"step": "screen", "status": "pending"},
        {"step": "synthesize", "status": "pending"},
    ],
}
SCRIPT = [
    reply("", ToolCall("call-skill", "read_skill", {"name": "literature-review"})),
    reply("", ToolCall("call-plan", "update_plan", PLAN)),
    reply("", ToolCall("call-search", "tool_search", {"query": "select:mcp_biomed_search"})),
    reply("", ToolCall("call-mcp", "mcp_biomed_search", {"query": "TP53 resistance"})),
    reply("TP53 R175H confers resistance [PMID:1]; uncertainty: small cohorts."),
]
DATA = re.compile(r'<runtime_context_data trust="([^"]+)" authority="data_only" channel="([^"]+)">\n[^\n]*\n(.*)\n</')


def run_settings(skills_dir: Path) -> dict:
    return {
        "run_contract": CONTRACT,
        "governance_summary": {"epoch": 1, "mode": "ask before write", "rules": ["allow read_file(**)"]},
        "skill_dirs": [skills_dir],
    }


def runtime_data(model_input: ModelInput) -> dict[str, dict]:
    found = {}
    for message in model_input.messages:
        match = DATA.search(message.content) if message.role is Role.USER else None
        if match:
            found[match.group(2)] = json.loads(match.group(3))
    return found


def everything(model_input: ModelInput) -> str:
    return model_input.system_prompt + "\n".join(m.content for m in model_input.messages)


def test_four_turns_disclose_skill_plan_and_deferred_tool_progressively(
    kernel, skills_dir: Path, literature_body, tmp_path: Path
) -> None:
    manager = kernel.manager(kernel.LabTools())
    context = ContextSettings(trace=True, trace_dir=tmp_path)
    runtime, run = kernel.compose(manager, run_settings(skills_dir), ContextScope.MAIN, SCRIPT, context=context)
    result = asyncio.run(runtime.run(RunRequest("ctx-lit", [Message.user(CONTRACT["objective"])], run_id="run-main")))
    assert result.status is RunStatus.COMPLETED, result.reason
    first, second, third, fourth = run.inputs[:4]
    body = literature_body.strip()

    # turn 1: the catalog, not the body; no runtime state yet; the deferred tool is only announced
    assert "- literature-review: Systematic literature review" in first.system_prompt
    assert body not in everything(first)
    assert runtime_data(first) == {}
    tools = [tool.name for tool in first.tools]
    assert "mcp_biomed_search" not in tools and "tool_search" in tools
    assert "Searchable, not loaded: mcp_biomed_search" in first.system_prompt
    for text in (first.system_prompt.split("\n\n")[0], CONTRACT["objective"], "epoch: 1"):
        assert text in first.system_prompt

    # turn 2: one read_skill result holding the body, plus the active_skills data message
    skill_results = [m for m in second.messages if m.role is Role.TOOL and m.name == "read_skill"]
    assert len(skill_results) == 1 and body in skill_results[0].content
    assert body not in second.system_prompt
    active = runtime_data(second)["active_skills"]
    assert active["instruction"].startswith("A skill reference is durable.")
    [reference] = active["skills"]
    assert {k: reference[k] for k in ("id", "version", "revision", "description")} == {
        "id": "literature-review",
        "version": "1.0.0",
        "revision": 1,
        "description": "Systematic literature review",
    }
    assert re.fullmatch(r"[0-9a-f]{64}", reference["hash"])
    assert reference["instructionsVisibleInHistory"] is True
    assert "<plan_state>" not in second.system_prompt

    # turn 3: the protected plan_state section, still the active skill
    assert "<plan_state>\nexplanation: TP53 resistance evidence review\n1. [in_progress] search" in third.system_prompt
    assert "3. [pending] synthesize\n</plan_state>" in third.system_prompt
    assert "active_skills" in runtime_data(third)
    assert "mcp_biomed_search" not in [tool.name for tool in third.tools]

    # turn 4: tool_search promoted the deferred tool during turn 3; it is callable from turn 4
    assert "mcp_biomed_search" in [tool.name for tool in fourth.tools]
    assert "Searchable" not in fourth.system_prompt
    assert "PMID:1" in result.history[-2].content

    # plan progress is observational trace data: declaring call, still visible, steps and results since
    progress = json.loads((tmp_path / "ctx-lit" / "turn-0004.json").read_text())["planProgress"]
    assert (progress["toolCallId"], progress["anchorFound"]) == ("call-plan", True)
    assert (progress["subsequentModelSteps"], progress["completedNonPlanToolResults"]) == (1, 1)
    assert "stale" not in json.dumps(progress)

    # the Skill body enters context once, through its read_skill result, in every model input
    for model_input in run.inputs:
        assert everything(model_input).count(body) <= 1
    assert [everything(model_input).count(body) for model_input in run.inputs] == [0, 1, 1, 1, 1]


def filler(index: int) -> list[Message]:
    call = ToolCall(f"call-read-{index}", "read_file", {"path": f"papers/{index}.md"})
    return [Message.assistant("", [call]), Message.tool_result(call, f"paper {index}: " + "evidence text " * 60)]


def test_after_compaction_of_a_60_message_history_plan_and_skill_reference_survive(
    kernel, skills_dir: Path, literature_body, tmp_path: Path
) -> None:
    manager = kernel.manager(kernel.LabTools())
    first_script = [SCRIPT[0], SCRIPT[1], reply("Plan recorded.")]
    runtime, _ = kernel.compose(manager, run_settings(skills_dir), ContextScope.MAIN, first_script, run_id="run-1")
    early = asyncio.run(runtime.run(RunRequest("ctx-long", [Message.user(CONTRACT["objective"])], run_id="run-1")))
    history = list(early.history)
    index = 0
    while len(history) < 60:
        history += filler(index)
        index += 1
    assert len(history) == 60 and history[-1].role is Role.TOOL

    trace_dir = tmp_path / "traces"
    context = ContextSettings(window_tokens=9000, pressure_percent=60, trace=True, trace_dir=trace_dir)
    runtime, run = kernel.compose(
        manager, run_settings(skills_dir), ContextScope.MAIN, [reply("Continuing.")], context=context, run_id="run-2"
    )
    result = asyncio.run(runtime.run(RunRequest("ctx-long", history, run_id="run-2")))
    assert result.status is RunStatus.COMPLETED, result.reason
    [model_input] = run.inputs

    assert literature_body.strip() not in everything(model_input)
    assert not any(m.tool_call_id in {"call-skill", "call-plan"} for m in model_input.messages)
    assert "<plan_state>\nexplanation: TP53 resistance evidence review" in model_input.system_prompt
    [reference] = runtime_data(model_input)["active_skills"]["skills"]
    assert (reference["id"], reference["revision"], reference["instructionsVisibleInHistory"]) == (
        "literature-review",
        1,
        False,
    )
    trace = json.loads((trace_dir / "ctx-long" / "turn-0001.json").read_text())
    assert trace["compaction"]["reason"] == "pressure" and trace["compaction"]["summarizedMessages"] > 0
    assert trace["planProgress"]["toolCallId"] == "call-plan"
    assert trace["planProgress"]["anchorFound"] is False
    assert "subsequentModelSteps" not in trace["planProgress"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fillers=st.integers(min_value=0, max_value=40), window=st.sampled_from([4000, 6000, 9000, 20000]))
def test_skill_flag_matches_what_the_model_sees_and_the_body_is_never_duplicated(
    kernel, skills_dir: Path, literature_body, fillers: int, window: int
) -> None:
    manager = kernel.manager(kernel.LabTools())
    runtime, _ = kernel.compose(
        manager, run_settings(skills_dir), ContextScope.MAIN, [SCRIPT[0], reply("ok")], run_id="r1"
    )
    early = asyncio.run(runtime.run(RunRequest("ctx-p", [Message.user(CONTRACT["objective"])], run_id="r1")))
    history = list(early.history)
    for index in range(fillers):
        history += filler(index)
    context = ContextSettings(window_tokens=window, pressure_percent=60)
    runtime, run = kernel.compose(
        manager, run_settings(skills_dir), ContextScope.MAIN, [reply("ok")], context=context, run_id="r2"
    )
    result = asyncio.run(runtime.run(RunRequest("ctx-p", history, run_id="r2")))
    assert result.status is RunStatus.COMPLETED, result.reason
    [model_input] = run.inputs
    seen = everything(model_input).count(literature_body.strip())
    assert seen <= 1
    [reference] = runtime_data(model_input)["active_skills"]["skills"]
    assert reference["instructionsVisibleInHistory"] is (seen == 1)
