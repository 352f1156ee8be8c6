"""Rule 1: direct calls take text, messages, a built input or a plan; over-limit input is rejected unprocessed."""

from __future__ import annotations

import asyncio

import pytest

from sciencediscovery.context.plans import ContextFragment, ContextPlan, PlanOverLimitError
from sciencediscovery.runtime_core import Message, ModelInput


def test_direct_call_accepts_text_messages_built_input_and_plan(kit) -> None:
    run, _, client = kit.make_run()
    plan = kit.plan_of(kit.instructions_fragment(), kit.history_fragment(1))
    built = ModelInput("system", (Message.user("built"),))

    async def main() -> list[str]:
        answers = []
        for value in ("plain text", [Message.user("a message")], built, plan):
            answers.append((await run.invoke(value, request=kit.request())).message.content)
        return answers

    assert asyncio.run(main()) == ["ok"] * 4
    assert client.inputs[0].messages == (Message.user("plain text"),)
    assert client.inputs[1].messages == (Message.user("a message"),)
    assert client.inputs[2] is built
    assert client.inputs[3].system_prompt == "You are a careful reviewer."
    assert [m.content for m in client.inputs[3].messages] == [e["content"] for e in kit.entries(1)]


def test_over_limit_plan_is_rejected_naming_limit_size_and_fragments(kit) -> None:
    run, sink, client = kit.make_run()
    plan = kit.plan_of(kit.instructions_fragment(), kit.history_fragment(20))
    with pytest.raises(PlanOverLimitError) as caught:
        asyncio.run(run.invoke(plan, request=kit.request(max_input_chars=500)))
    error = caught.value
    assert (error.limit_name, error.limit) == ("max_input_chars", 500)
    assert error.measured == sum(len(e["content"]) for e in kit.entries(20))
    assert error.fragment_ids == ("history",)
    assert "max_input_chars is 500" in str(error)
    assert client.inputs == []
    assert run.quota.used == 0


def test_processing_is_never_inserted_implicitly(kit) -> None:
    run, sink, client = kit.make_run()
    plan = kit.plan_of(kit.history_fragment(20))
    with pytest.raises(PlanOverLimitError):
        asyncio.run(run.invoke(plan, request=kit.request(max_input_chars=500)))
    stages = {event.stage for event in sink.events}
    assert stages == {"invoke"}
    assert [e.kind for e in sink.events] == ["context_stage_started", "context_stage_failed", "context_stage_duration"]


def test_over_limit_text_and_messages_are_rejected_too(kit) -> None:
    run, _, client = kit.make_run()
    for value in ("x" * 101, [Message.user("x" * 101)]):
        with pytest.raises(PlanOverLimitError, match="max_input_chars"):
            asyncio.run(run.invoke(value, request=kit.request(max_input_chars=100)))
    assert client.inputs == []


def test_a_plan_is_rendered_as_data_not_instructions(kit) -> None:
    untrusted = kit.history_fragment(1, trust="untrusted")
    data = ContextPlan((kit.instructions_fragment(), untrusted, _data_fragment()), processing_ids=("history",))
    run, _, client = kit.make_run()
    asyncio.run(run.invoke(data, request=kit.request()))
    sent = client.inputs[0]
    assert "papers" not in sent.system_prompt
    assert sent.messages[-1].role.value == "user"
    assert sent.messages[-1].metadata == {"fragment_id": "papers", "trust": "untrusted"}
    assert all(m.metadata["trust"] == "untrusted" for m in sent.messages[:2])


def _data_fragment() -> ContextFragment:
    return ContextFragment("papers", "search", "data", {"papers": [{"title": "TP53"}]}, trust="untrusted")
