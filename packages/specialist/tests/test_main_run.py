"""Done-when: a scripted main run delegates to two specialists concurrently in one turn and receives their
validated briefs."""

from __future__ import annotations

import asyncio
import json

from sciencediscovery.runtime_core import RunStatus, ToolCall, ToolResultStatus

from .conftest import reply

SCOUT_BRIEF = """## Search strategy
PubMed: "TP53 R175H" AND resistance, 2015-2024.

## Findings
R175H confers cisplatin resistance in two cohorts [PMID:1].

## Sources
- PMID:1
- PMID:2

## Gaps and limitations
Only retrospective cohorts.
"""
REVIEW_BRIEF = json.dumps(
    {
        "claims": [{"claim": "R175H confers resistance", "verdict": "supported", "evidence": ["PMID:1"]}],
        "overall": "supported",
    }
)


def test_main_run_delegates_to_two_specialists_concurrently_and_receives_validated_briefs(harness) -> None:
    both_started = asyncio.Barrier(2)

    def after_both_started(brief: str):
        async def step(model_input):
            await asyncio.wait_for(both_started.wait(), 30)  # deadlocks (then fails) if the children ran one by one
            return reply(brief)

        return step

    script = [
        reply(
            "",
            ToolCall(
                "call-scout", "task", {"objective": "Find evidence on TP53 R175H", "specialist": "literature-scout"}
            ),
            ToolCall(
                "call-review", "task", {"objective": "Check the resistance claim", "specialist": "evidence-reviewer"}
            ),
        ),
        reply("Done."),
    ]
    children = {
        "literature-scout": [after_both_started(SCOUT_BRIEF)],
        "evidence-reviewer": [after_both_started(REVIEW_BRIEF)],
    }
    result, run, factory = harness.run_main(harness.manager(harness.LabTools()), script, children)

    assert result.status is RunStatus.COMPLETED
    scout, review = result.history[2], result.history[3]
    assert (scout.tool_call_id, scout.status, review.tool_call_id, review.status) == (
        "call-scout",
        ToolResultStatus.OK,
        "call-review",
        ToolResultStatus.OK,
    )
    assert scout.content == SCOUT_BRIEF.strip() and json.loads(review.content)["overall"] == "supported"

    delegations = run.channels.snapshot()["delegations"]
    assert [(d.specialist, d.status) for d in delegations] == [
        ("literature-scout", "completed"),
        ("evidence-reviewer", "completed"),
    ]
    checks = run.sink.of_kind("subagent_brief_checked")
    assert sorted((e.specialist, e.attempt, e.conforming) for e in checks) == [
        ("evidence-reviewer", 1, True),
        ("literature-scout", 1, True),
    ]
    states = [(e.child_context_id.rsplit("-", 1)[-1], e.state) for e in run.sink.of_kind("subagent_state_changed")]
    running = [i for i, (_, state) in enumerate(states) if state == "running"]
    completed = [i for i, (_, state) in enumerate(states) if state == "completed"]
    assert len(running) == 2 and max(running) < min(completed)  # both ran before either finished

    # each child saw its own identity, contract and governed tools
    scout_input = factory.runs["ctx-main/task-call-scout"].model.inputs[0]
    assert scout_input.system_prompt.startswith("You are the literature scout")
    assert "## Search strategy, ## Findings, ## Sources, ## Gaps and limitations" in scout_input.system_prompt
    assert [t.name for t in scout_input.tools] == ["read_file", "list_files"]
    review_input = factory.runs["ctx-main/task-call-review"].model.inputs[0]
    assert '"required": ["claims", "overall"]' in review_input.system_prompt


def test_the_catalogue_of_specialists_is_in_the_main_capabilities_section_only(harness) -> None:
    script = [
        reply("", ToolCall("call-1", "task", {"objective": "Compare", "specialist": "methods-comparer"})),
        reply("ok"),
    ]
    brief = "## Methods\na\n## Criteria\nb\n## Comparison\nc\n## Recommendation\nd\n## Limitations\ne"
    _, run, factory = harness.run_main(
        harness.manager(harness.LabTools()), script, {"methods-comparer": [reply(brief)]}
    )
    main_prompt = run.model.inputs[0].system_prompt
    catalogue = main_prompt[main_prompt.index("Specialists (delegate with task") :]
    for name in ("data-analyst", "evidence-reviewer", "literature-scout", "methods-comparer"):
        assert f"- {name}: " in catalogue
    assert "brief: sections Methods, Criteria, Comparison, Recommendation, Limitations" in catalogue
    child_prompt = factory.runs["ctx-main/task-call-1"].model.inputs[0].system_prompt
    assert "Specialists (delegate with task" not in child_prompt  # the child has no task tool


def test_an_unknown_specialist_is_a_tool_error_listing_the_available_ones(harness) -> None:
    script = [reply("", ToolCall("call-1", "task", {"objective": "x", "specialist": "oracle"})), reply("ok")]
    result, run, factory = harness.run_main(harness.manager(), script, {})
    error = result.history[2]
    assert error.status is ToolResultStatus.ERROR
    assert "oracle" in error.content
    for name in ("data-analyst", "evidence-reviewer", "literature-scout", "methods-comparer"):
        assert name in error.content
    assert factory.specs == [] and run.sink.of_kind("subagent_state_changed") == []
