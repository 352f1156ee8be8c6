"""Output contracts: required sections and JSON Schema, the one repair round, delivery with a diagnostic."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.runtime_core import RunStatus, ToolCall, ToolResultStatus, hookimpl
from sciencediscovery.specialist import JsonSchemaContract, RequiredSections, Specialist, SpecialistDefinitionError

from .conftest import reply

SECTIONS = RequiredSections(["Findings", "Sources"])
GOOD = "## Findings\nR175H confers resistance.\n\n## Sources\n- PMID:1\n"
MISSING_SOURCES = "## Findings\nR175H confers resistance.\n"
SCHEMA = {
    "type": "object",
    "required": ["verdict"],
    "properties": {"verdict": {"enum": ["supported", "unsupported"]}, "score": {"type": "number"}},
}


def test_sections_name_what_is_missing_or_empty() -> None:
    assert SECTIONS.check(GOOD) == ()
    assert SECTIONS.check("# findings:\ntext\n### SOURCES\n- a") == ()  # any level, case and colon do not matter
    assert SECTIONS.check(MISSING_SOURCES) == (
        "missing section 'Sources': add a Markdown heading '## Sources' with its content",
    )
    assert SECTIONS.check("## Findings\n\n## Sources\nx") == ("section 'Findings' is empty",)
    fenced = "## Findings\ntext\n```\n## Sources\n```\n"
    assert SECTIONS.check(fenced)[0].startswith("missing section 'Sources'")


def test_a_subheading_belongs_to_its_section() -> None:
    assert SECTIONS.check("## Findings\n### Cohort A\nresistant\n## Sources\nPMID:1") == ()


section_title = st.text(alphabet=st.characters(categories=("L", "N")), min_size=1, max_size=12)


@settings(max_examples=60)
@given(st.lists(section_title, min_size=1, max_size=5, unique_by=str.casefold), st.data())
def test_a_brief_conforms_exactly_when_every_required_section_has_content(titles, data) -> None:
    contract = RequiredSections(titles)
    present = data.draw(st.lists(st.sampled_from(titles), unique=True))
    body = "\n\n".join(f"## {title}\ncontent of {title}" for title in present)
    findings = contract.check(body)
    missing = [title for title in titles if title not in present]
    assert [f.split("'")[1] for f in findings] == missing


def test_json_schema_findings_name_the_path() -> None:
    contract = JsonSchemaContract(SCHEMA)
    assert contract.check('{"verdict": "supported"}') == ()
    assert contract.check('Here it is:\n```json\n{"verdict": "supported"}\n```') == ()
    assert contract.check('{"verdict": "maybe", "score": "high"}') == (
        "score: 'high' is not of type 'number'",
        "verdict: 'maybe' is not one of ['supported', 'unsupported']",
    )
    assert contract.check("{}") == ("(root): 'verdict' is a required property",)
    [finding] = contract.check("The claim holds.")
    assert finding.startswith("the brief is not one JSON document")


def test_an_invalid_schema_is_rejected_at_load_naming_the_field() -> None:
    with pytest.raises(SpecialistDefinitionError) as caught:
        JsonSchemaContract({"type": "object", "properties": {"verdict": {"type": "maybe"}}})
    assert caught.value.field == "contract.schema['properties']['verdict']['type']"
    with pytest.raises(SpecialistDefinitionError, match=r"contract.sections\[1\]: repeats"):
        RequiredSections(["Findings", "findings"])


class Scout:
    """A third-party style specialist with a section contract."""

    @hookimpl
    def register_specialists(self, register, settings):
        register(
            Specialist.create(
                name="scout",
                description="Finds things",
                identity="You are the scout.",
                tools=(),
                max_turns=4,
                contract=SECTIONS,
            )
        )


def delegate(harness, child_script, settings=None):
    script = [reply("", ToolCall("call-1", "task", {"objective": "Find", "specialist": "scout"})), reply("Done.")]
    return harness.run_main(harness.manager(Scout()), script, {"scout": child_script}, settings)


def test_a_non_conforming_brief_is_returned_once_with_the_findings_and_the_repair_is_delivered(harness) -> None:
    result, run, factory = delegate(harness, [reply(MISSING_SOURCES), reply(GOOD)])
    brief = result.history[2]
    assert (brief.status, brief.content) == (ToolResultStatus.OK, GOOD.strip())
    repair_input = factory.models["scout"].inputs[1]
    request = repair_input.messages[-1].content
    assert "missing section 'Sources'" in request and "Reply with the complete corrected brief only." in request
    assert MISSING_SOURCES in [m.content for m in repair_input.messages]  # the child's own answer
    checks = [(e.attempt, e.conforming, e.findings) for e in run.sink.of_kind("subagent_brief_checked")]
    assert checks == [(1, False, SECTIONS.check(MISSING_SOURCES)), (2, True, ())]
    [delegation] = run.channels.snapshot()["delegations"]
    assert (delegation.status, delegation.turns) == ("completed", 2)
    assert [s.context_id for s in factory.specs] == ["ctx-main/task-call-1", "ctx-main/task-call-1/repair"]
    assert factory.specs[1].max_turns == 3  # what is left of the specialist's budget


def test_a_brief_still_non_conforming_after_one_repair_is_delivered_with_a_diagnostic(harness) -> None:
    result, run, factory = delegate(harness, [reply(MISSING_SOURCES), reply("Sorry, " + MISSING_SOURCES)])
    brief = result.history[2]
    assert brief.status is ToolResultStatus.OK
    assert brief.content.startswith("[Output contract not met after one repair round")
    assert "- missing section 'Sources'" in brief.content
    assert brief.content.endswith("Sorry, " + MISSING_SOURCES.strip())  # delivered, not dropped
    assert len(factory.models["scout"].inputs) == 2  # exactly one repair round
    assert run.runner.records["ctx-main/task-call-1"].transitions[-1].detail == "brief delivered with a diagnostic"
    assert run.channels.snapshot()["delegations"][0].brief == brief.content


def test_a_repair_round_that_fails_delivers_the_first_brief_with_the_reason(harness) -> None:
    result, _, _ = delegate(harness, [reply(MISSING_SOURCES), RuntimeError("model gone")])
    content = result.history[2].content
    assert "the repair round ended with status failed: RuntimeError: model gone" in content
    assert content.endswith(MISSING_SOURCES.strip())


def test_an_overlong_brief_is_sent_back_to_be_shortened_then_bounded_before_the_parents_history(harness) -> None:
    long = GOOD + "\n" + "more detail\n" * 400
    result, run, factory = delegate(harness, [reply(long), reply(long)], {"task_brief_max_chars": 1000})
    [first, _] = [e.findings for e in run.sink.of_kind("subagent_brief_checked")]
    assert first == (f"the brief has {len(long.strip())} characters; the limit is 1000: shorten it",)
    content = result.history[2].content
    assert len(content) <= 1000 and content.startswith("[Output contract not met")
    assert "brief truncated" in content
    assert result.status is RunStatus.COMPLETED


def test_a_failing_or_turn_limited_child_gets_no_contract_check(harness) -> None:
    _, run, factory = delegate(harness, [RuntimeError("boom")])
    assert run.sink.of_kind("subagent_brief_checked") == [] and len(factory.specs) == 1


def test_the_evidence_reviewer_brief_is_checked_against_its_json_schema(harness) -> None:
    bad = json.dumps({"claims": [{"claim": "x", "verdict": "maybe", "evidence": []}], "overall": "supported"})
    good = json.dumps(
        {"claims": [{"claim": "x", "verdict": "supported", "evidence": ["PMID:1"]}], "overall": "supported"}
    )
    script = [
        reply("", ToolCall("call-1", "task", {"objective": "Check", "specialist": "evidence-reviewer"})),
        reply("ok"),
    ]
    result, run, factory = harness.run_main(harness.manager(), script, {"evidence-reviewer": [reply(bad), reply(good)]})
    [first, second] = run.sink.of_kind("subagent_brief_checked")
    assert first.findings[0].startswith("claims/0/verdict: 'maybe' is not one of")
    assert second.conforming and result.history[2].content == good
