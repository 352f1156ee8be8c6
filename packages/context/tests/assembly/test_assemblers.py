"""The three modes through the real kernel loop: dynamic, shadow, legacy; scopes; traces; overflow recovery."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from sciencediscovery.context import (
    BudgetExceededError,
    ContextScope,
    ContextSettings,
    DefaultContextAssembler,
    DeterministicSummarizer,
    DynamicContextAssembler,
    ShadowContextAssembler,
    SystemSection,
    TraceWriter,
    build_context_assembler,
)
from sciencediscovery.runtime_core import (
    OUTPUT_REF_KEY,
    AssemblyRequest,
    Message,
    RunStatus,
    ToolCall,
)
from sciencediscovery.runtime_core.serialization import to_json

IDENTITY = SystemSection("identity", "identity", "You are a careful scientific agent.")
CONTRACT = SystemSection(
    "run_contract", "run_contract", "Objective: review TP53 evidence. Do not execute ungoverned tools."
)
REVIEWER = SystemSection("reviewer.identity", "identity", "You are the reviewer.")


def settings(tmp_path: Path, mode: str = "dynamic", **extra: str) -> ContextSettings:
    environ = {"SCIENCE_AGENT_CONTEXT_MODE": mode, "SCIENCE_AGENT_CONTEXT_TRACE": "1", **extra}
    return ContextSettings.from_environ(environ, data_dir=tmp_path)


def assembler(kit: Any, tmp_path: Path, mode: str = "dynamic", scope: str = "main", **extra: str) -> Any:
    factories = [
        kit.section_factory("identity", IDENTITY, scopes=["main", "subagent"], required=True),
        kit.section_factory("contract", CONTRACT, required=True),
        kit.section_factory("reviewer", REVIEWER, scopes=["reviewer"]),
    ]
    return build_context_assembler(
        settings(tmp_path, mode, **extra),
        tools_provider=kit.tools_provider,
        system_prompt="Legacy system prompt.",
        summarizer=DeterministicSummarizer(),
        scope=ContextScope(scope),
        factories=factories,
        channels=[kit.PlanChannel()],
    )


def plan_script() -> list[Message]:
    plan = ToolCall(
        "p1",
        "update_plan",
        {"explanation": "TP53 resistance evidence review", "items": ["search", "screen", "synthesize"]},
    )
    return [
        Message.assistant("", [plan]),
        Message.assistant("", [ToolCall("s1", "search", {"q": "TP53"})]),
        Message.assistant("Summary."),
    ]


def traces(tmp_path: Path) -> list[dict[str, Any]]:
    folder = tmp_path / "context-traces" / "ctx-1"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("turn-*.json"))]


def test_build_context_assembler_selects_the_mode(kit: Any, tmp_path: Path) -> None:
    assert isinstance(assembler(kit, tmp_path, "legacy"), DefaultContextAssembler)
    assert isinstance(assembler(kit, tmp_path, "dynamic"), DynamicContextAssembler)
    assert isinstance(assembler(kit, tmp_path, "shadow"), ShadowContextAssembler)


def test_dynamic_mode_sends_contributed_sections_and_runtime_state(kit: Any, tmp_path: Path) -> None:
    model = kit.ScriptedModel(plan_script())
    result, _ = kit.run_kernel(assembler(kit, tmp_path), model, kit.Tools(), [Message.user("Review TP53")])
    assert result.status is RunStatus.COMPLETED
    first, second, third = model.inputs
    assert first.system_prompt == f"{IDENTITY.content}\n\n{CONTRACT.content}"
    assert [m.content for m in first.messages] == ["Review TP53"]
    assert "<plan_state>" in second.system_prompt and "TP53 resistance evidence review" in second.system_prompt
    assert second.messages[-1].metadata["channel"] == "plan"
    assert [t.name for t in third.tools] == [t.name for t in kit.TOOLS]
    written = traces(tmp_path)
    assert [t["turn"] for t in written] == [1, 2, 3]
    for trace, sent in zip(written, model.inputs, strict=True):
        assert trace["schemaVersion"] == 5 and trace["mode"] == "dynamic" and trace["selectedPath"] == "dynamic"
        assert trace["scope"] == "main" and trace["llmInput"] == to_json(sent)
        assert trace["renderedContext"]["systemPrompt"] == sent.system_prompt
        for key in ("budgets", "contributors", "collection", "admitted", "compaction", "planProgress", "recovery"):
            assert key in trace
    assert {c["id"]: c["status"] for c in written[0]["contributors"]} == {
        "identity": "ok",
        "contract": "ok",
        "runtime.state": "ok",
    }
    assert written[0]["planProgress"] is None
    assert written[2]["planProgress"]["anchorFound"] is True
    assert written[2]["planProgress"]["subsequentModelSteps"] == 1
    assert written[2]["planProgress"]["completedNonPlanToolResults"] == 1
    assert written[1]["renderedContext"]["sectionIds"] == ["identity", "run_contract", "plan_state"]


def test_trace_files_are_private(kit: Any, tmp_path: Path) -> None:
    kit.run_kernel(assembler(kit, tmp_path), kit.ScriptedModel([]), kit.Tools(), [Message.user("hi")])
    path = tmp_path / "context-traces" / "ctx-1" / "turn-0001.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list(path.parent.glob("*.tmp"))


def test_shadow_traces_the_dynamic_candidate_but_sends_legacy_input(kit: Any, tmp_path: Path) -> None:
    model = kit.ScriptedModel(plan_script())
    result, _ = kit.run_kernel(assembler(kit, tmp_path, "shadow"), model, kit.Tools(), [Message.user("Review TP53")])
    assert result.status is RunStatus.COMPLETED
    assert all(sent.system_prompt == "Legacy system prompt." for sent in model.inputs)
    assert all(not m.metadata.get("invocation_local") for sent in model.inputs for m in sent.messages)
    written = traces(tmp_path)
    assert all(t["mode"] == "shadow" and t["selectedPath"] == "legacy" for t in written)
    assert written[1]["llmInput"] == to_json(model.inputs[1])
    assert "<plan_state>" in written[1]["renderedContext"]["systemPrompt"]
    assert written[1]["renderedContext"]["systemPrompt"] != written[1]["llmInput"]["system_prompt"]


def test_legacy_is_the_static_prompt_and_canonical_history(kit: Any, tmp_path: Path) -> None:
    model = kit.ScriptedModel(plan_script())
    result, _ = kit.run_kernel(assembler(kit, tmp_path, "legacy"), model, kit.Tools(), [Message.user("Review TP53")])
    assert result.status is RunStatus.COMPLETED
    assert all(sent.system_prompt == "Legacy system prompt." for sent in model.inputs)
    assert model.inputs[-1].messages == result.history[:-1]
    assert traces(tmp_path)[0]["mode"] == "legacy"


@pytest.mark.parametrize(("scope", "identity"), [("main", IDENTITY), ("subagent", IDENTITY), ("reviewer", REVIEWER)])
def test_scopes_select_their_contributors(kit: Any, tmp_path: Path, scope: str, identity: SystemSection) -> None:
    model = kit.ScriptedModel([])
    kit.run_kernel(assembler(kit, tmp_path, scope=scope), model, kit.Tools(), [Message.user("Check the report")])
    assert model.inputs[0].system_prompt.startswith(identity.content)
    assert traces(tmp_path)[0]["scope"] == scope


def test_overflow_recovery_is_a_forced_pass_traced_beside_the_original(kit: Any, tmp_path: Path) -> None:
    big = "spectrum peak 1024.5 intensity 0.93 " * 400
    search = ToolCall("s0", "search")
    history = [
        Message.user("Review TP53"),
        Message.assistant("", [search]),
        Message.tool_result(search, big, **{OUTPUT_REF_KEY: "out-s0"}),
        Message.user("continue"),
    ]
    model = kit.ScriptedModel(["overflow", Message.assistant("done")])
    result, sink = kit.run_kernel(assembler(kit, tmp_path), model, kit.Tools(), history)
    assert result.status is RunStatus.COMPLETED
    assert len(sink.of_kind("overflow_recovery")) == 1
    folder = tmp_path / "context-traces" / "ctx-1"
    assert sorted(p.name for p in folder.iterdir()) == ["turn-0001-recovery-1.json", "turn-0001.json"]
    recovery = json.loads((folder / "turn-0001-recovery-1.json").read_text())
    assert recovery["recovery"] == {"attempt": 1, "reason": "prompt is too long"}
    assert recovery["compaction"]["reason"] == "forced"
    assert recovery["budgets"]["windowTarget"] == recovery["budgets"]["effectiveInputLimit"] * 3 // 4
    assert recovery["renderedContext"]["estimatedInputTokens"] <= recovery["budgets"]["windowTarget"]
    assert recovery["compaction"]["compactedToolOutputRefs"] == ["out-s0"]
    assert 'read_tool_output(ref="out-s0")' in model.inputs[1].messages[2].content
    assert len(model.inputs[1].messages[2].content) < len(big)


def test_protected_sections_over_budget_fail_before_the_provider_call(kit: Any, tmp_path: Path) -> None:
    huge = SystemSection("governance", "governance", "rule. " * 5000)
    dynamic = DynamicContextAssembler(
        settings=settings(tmp_path, SCIENCE_AGENT_CONTEXT_PROMPT_TOKENS="1000"),
        tools_provider=kit.tools_provider,
        summarizer=DeterministicSummarizer(),
        factories=[kit.section_factory("gov", huge, required=True)],
        trace_writer=TraceWriter(tmp_path / "context-traces"),
    )
    model = kit.ScriptedModel([])
    result, _ = kit.run_kernel(dynamic, model, kit.Tools(), [Message.user("go")])
    assert result.status is RunStatus.FAILED and result.error_type == "BudgetExceededError"
    assert model.inputs == []
    failure = traces(tmp_path)[0]
    assert failure["error"]["type"] == "BudgetExceededError" and failure["llmInput"] is None


def test_long_history_keeps_plan_state_after_compaction(kit: Any, tmp_path: Path) -> None:
    plan = ToolCall("p1", "update_plan", {"explanation": "TP53 review", "items": ["search", "screen"]})
    history: list[Message] = [
        Message.user("Review TP53"),
        Message.assistant("", [plan]),
        Message.tool_result(plan, "ok"),
    ]
    for n in range(60):
        call = ToolCall(f"s{n}", "search", {"q": f"paper {n}"})
        history += [Message.assistant("", [call]), Message.tool_result(call, f"abstract {n} " * 300)]
    dynamic = assembler(kit, tmp_path, MODEL_MAX_TOKENS="30000", OUTPUT_RESERVE_TOKENS="2000")
    model = kit.ScriptedModel([])
    result, _ = kit.run_kernel(dynamic, model, kit.Tools(), history)
    sent = model.inputs[0]
    assert result.status is RunStatus.COMPLETED
    assert not any(call.id == "p1" for m in sent.messages for call in m.tool_calls)
    assert "<plan_state>" in sent.system_prompt
    assert any(m.metadata.get("context_checkpoint") for m in result.history)
    progress = traces(tmp_path)[0]["planProgress"]
    assert progress["anchorFound"] is False and "subsequentModelSteps" not in progress


def test_assembly_does_not_touch_the_request_history(kit: Any, tmp_path: Path) -> None:
    import asyncio

    history = (Message.user("Review TP53"),)
    request = AssemblyRequest("run-9", "ctx-9", 1, history)
    dynamic = assembler(kit, tmp_path)
    assembled = asyncio.run(dynamic.assemble(request))
    assert request.history == history and assembled.history == history


def test_a_minimal_window_that_cannot_fit_fails_clearly(kit: Any, tmp_path: Path) -> None:
    import asyncio

    dynamic = assembler(kit, tmp_path, MODEL_MAX_TOKENS="3000", OUTPUT_RESERVE_TOKENS="1000")
    request = AssemblyRequest("run-9", "ctx-9", 1, (Message.user("x" * 20_000),))
    with pytest.raises(BudgetExceededError, match="minimal history window"):
        asyncio.run(dynamic.assemble(request))


def test_contributors_are_collected_again_only_when_compaction_changed_the_history(kit: Any, tmp_path: Path) -> None:
    import asyncio

    from sciencediscovery.context import Contribution, Contributor, ContributorFactory

    seen: list[int] = []

    async def count(request: Any) -> Contribution:
        seen.append(len(request.history))
        return Contribution(sections=[IDENTITY])

    dynamic = DynamicContextAssembler(
        settings=settings(tmp_path, MODEL_MAX_TOKENS="12000", OUTPUT_RESERVE_TOKENS="2000"),
        tools_provider=kit.tools_provider,
        summarizer=DeterministicSummarizer(),
        factories=[ContributorFactory("counter", lambda scope: Contributor("counter", count))],
    )
    short = (Message.user("Review TP53"),)
    asyncio.run(dynamic.assemble(AssemblyRequest("run-a", "ctx-a", 1, short)))
    assert seen == [1]
    long: list[Message] = [Message.user("Review TP53")]
    for n in range(20):
        call = ToolCall(f"s{n}", "search")
        long += [Message.assistant("", [call]), Message.tool_result(call, f"abstract {n} " * 300)]
    seen.clear()
    assembled = asyncio.run(dynamic.assemble(AssemblyRequest("run-b", "ctx-b", 1, tuple(long))))
    assert len(seen) == 2 and seen[0] == len(long) and seen[1] == len(assembled.history) < len(long)
