"""The real in-process path with only the model transport scripted: budgets, trace phases, compaction."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sciencediscovery.api.examples import SKILL, RecordingPlatform
from sciencediscovery.api.settings import ServiceSettings
from sciencediscovery.runtime_core import Message, ToolCall

ENV = {"SCIENCE_AGENT_PERMISSION_DEFAULT": "allow", "SCIENCEDISCOVERY_DISABLE_PLUGINS": "hello"}
BODY = "Screen titles and abstracts; record every exclusion reason."


def platform(tmp_path: Path, turns: list[dict], **environ: str) -> RecordingPlatform:
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    skills = tmp_path / "skills" / "literature-review"
    skills.mkdir(parents=True, exist_ok=True)
    (skills / "SKILL.md").write_text(SKILL)
    settings = ServiceSettings.load(
        data_dir=tmp_path / "data",
        model=f"scripted:{script}",
        trace_dir=tmp_path / "traces",
        skill_dirs=(tmp_path / "skills",),
        environ={**ENV, **environ},
    )
    return RecordingPlatform(settings)


def traces(tmp_path: Path, context_id: str) -> dict[str, dict]:
    folder = tmp_path / "traces" / context_id
    return {path.name: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


def test_budgets_follow_the_model_facts_and_their_overrides(tmp_path: Path) -> None:
    default = platform(tmp_path / "a", [{"content": "done"}])
    summary = asyncio.run(default.run_new({"objective": "x"}))
    budgets = traces(tmp_path / "a", summary.context_id)["turn-0001.json"]["budgets"]
    assert (budgets["modelMaxTokens"], budgets["outputReserveTokens"]) == (32768, 4096)  # the scripted model's facts
    assert budgets["effectiveInputLimit"] == 32768 - 4096

    small = platform(
        tmp_path / "b",
        [{"content": "done"}],
        MODEL_MAX_TOKENS="20000",
        OUTPUT_RESERVE_TOKENS="2000",
        SCIENCE_AGENT_CONTEXT_WINDOW_TOKENS="15000",
    )
    summary = asyncio.run(small.run_new({"objective": "x"}))
    budgets = traces(tmp_path / "b", summary.context_id)["turn-0001.json"]["budgets"]
    assert budgets["effectiveInputLimit"] == 15000  # min(window, 20000 - 2000)


def test_overflow_recovery_is_traced_beside_the_original_attempt(tmp_path: Path) -> None:
    recorded = platform(tmp_path, [{"error": "context_overflow"}, {"content": "recovered"}])
    summary = asyncio.run(recorded.run_new({"objective": "x"}))
    assert summary.status == "completed" and summary.final_answer == "recovered"
    files = traces(tmp_path, summary.context_id)
    assert sorted(files) == ["turn-0001-recovery-1.json", "turn-0001.json"]
    assert files["turn-0001.json"]["schemaVersion"] == 5
    assert files["turn-0001-recovery-1.json"]["recovery"]["attempt"] == 1
    assert files["turn-0001-recovery-1.json"]["llmInput"] == json.loads(
        json.dumps(files["turn-0001-recovery-1.json"]["llmInput"])
    )
    assert len(recorded.turn_inputs()) == 2  # the exact inputs of both attempts reached the model client


def test_long_history_keeps_plan_and_skill_references_without_duplicating_the_skill_body(tmp_path: Path) -> None:
    plan = {"explanation": "TP53 resistance evidence review", "items": [{"step": "search", "status": "in_progress"}]}
    recorded = platform(
        tmp_path,
        [
            {"tool_calls": [{"id": "c-skill", "name": "read_skill", "arguments": {"name": "literature-review"}}]},
            {"tool_calls": [{"id": "c-plan", "name": "update_plan", "arguments": plan}]},
            {"content": "first pass done"},
            {"content": "final answer after compaction"},
        ],
        MODEL_MAX_TOKENS="9000",
        OUTPUT_RESERVE_TOKENS="1000",
    )
    first = asyncio.run(recorded.run_new({"objective": "Review current evidence about TP53 resistance mechanisms"}))
    assert first.status == "completed", first.reason
    context = first.context_id
    assert sum(BODY in m.content for m in recorded.turn_inputs()[-1].messages) == 1
    for index in range(30):  # more than 60 further messages of ordinary work
        call = ToolCall(f"h-{index}", "list_claims", {})
        recorded.store.append_step(
            context, [Message.assistant(f"step {index}", [call]), Message.tool_result(call, "x " * 300)]
        )
    recorded.store.append_step(context, [Message.user("Continue and give the final answer.")])

    summary = asyncio.run(recorded.runs.run(context))
    assert summary.status == "completed", summary.reason
    final = recorded.turn_inputs()[-1]
    texts = [m.content for m in final.messages]
    assert not any(BODY in text for text in texts), "the old Skill body was compacted away"
    assert BODY not in final.system_prompt
    [skills] = [t for t in texts if 'channel="active_skills"' in t]
    assert '"instructionsVisibleInHistory":false' in skills.replace(" ", "")
    assert "TP53 resistance evidence review" in final.system_prompt  # the protected plan_state section
    last = traces(tmp_path, context)
    trace = last[sorted(name for name in last if "recovery" not in name)[-1]]
    assert trace["compaction"]["reason"] is not None
    assert trace["compaction"]["estimatedTokensAfter"] < trace["compaction"]["estimatedTokensBefore"]
    assert trace["planProgress"]["anchorFound"] is False
