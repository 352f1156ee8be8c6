"""Rule 7: one real request measured and sent, schema/body/token limits, and the shared model-call quota."""

from __future__ import annotations

import asyncio
import json
import threading

import attrs
import pytest

from sciencediscovery.context.plans import (
    RESPONSE_SCHEMA_KEY,
    AutoSelection,
    CompressStep,
    ContextFragment,
    ContextPolicy,
    ContextProcessor,
    HandlerCallLimitError,
    ModelCallQuota,
    PlanDefinitionError,
    PlanOverLimitError,
    Preserve,
    QuotaExhaustedError,
    TokenBudget,
    assemble,
    measure,
)
from sciencediscovery.runtime_core import Message, ModelInput, ToolSpec
from sciencediscovery.runtime_core.serialization import to_json

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string"}}}


class RecordingCounter:
    """Counts one token per 4 characters of everything in the request, and records what it saw."""

    def __init__(self) -> None:
        self.seen: list[ModelInput] = []

    def count(self, model_input: ModelInput) -> int:
        self.seen.append(model_input)
        return len(json.dumps(to_json(model_input))) // 4


def test_the_measured_snapshot_is_the_object_sent(kit) -> None:
    run, _, client = kit.make_run()
    result = asyncio.run(
        ContextProcessor(ContextPolicy()).process(run, kit.plan_of(kit.history_fragment(2)), request=kit.request())
    )
    asyncio.run(run.invoke(result.input, prepared=result.prepared))
    assert client.inputs[0] is result.input


def test_instructions_and_tool_declarations_are_limited_by_max_schema_chars(kit) -> None:
    tool = ToolSpec("search", "find papers", {"type": "object", "properties": {"q": {"type": "string"}}})
    plan = kit.plan_of(kit.instructions_fragment("Review carefully."), kit.history_fragment(1))
    schema_chars = len("Review carefully.") + len(json.dumps([to_json(tool)], separators=(",", ":")))
    run, _, client = kit.make_run()
    with pytest.raises(PlanOverLimitError) as caught:
        asyncio.run(run.invoke(plan, request=kit.request(max_schema_chars=schema_chars - 1, tools=(tool,))))
    assert (caught.value.limit_name, caught.value.measured) == ("max_schema_chars", schema_chars)
    assert caught.value.fragment_ids == ("instructions",)
    asyncio.run(run.invoke(plan, request=kit.request(max_schema_chars=schema_chars, tools=(tool,))))
    assert client.inputs[0].tools == (tool,)


def test_a_json_schema_embedded_in_instructions_is_not_counted_twice(kit) -> None:
    schema_text = json.dumps(SCHEMA)
    embedded = kit.plan_of(kit.instructions_fragment(f"Answer as JSON matching {schema_text}"), processing=())
    separate = kit.plan_of(kit.instructions_fragment("Answer as JSON."), processing=())
    req = kit.request(response_schema=SCHEMA)
    embedded_input = assemble(embedded, req)
    assert embedded_input.metadata[RESPONSE_SCHEMA_KEY] == SCHEMA
    assert measure(embedded_input, req).schema_chars == len(embedded_input.system_prompt)
    compact = len(json.dumps(SCHEMA, separators=(",", ":")))
    assert measure(assemble(separate, req), req).schema_chars == len("Answer as JSON.") + compact


def test_the_token_counter_sees_the_real_request_and_budget_deducts_reservation_and_margin(kit) -> None:
    image = Message.user("figure 2", images=[{"media_type": "image/png", "ref": "artifact:7"}])
    plan = kit.plan_of(kit.instructions_fragment(), kit.history_fragment(2), additional_messages=(image,))
    counter = RecordingCounter()
    tokens = counter.count(assemble(plan, kit.request(response_schema=SCHEMA)))
    run, _, client = kit.make_run()
    tight = TokenBudget(tokens + 30 - 1, output_reservation=20, safety_margin=10)
    with pytest.raises(PlanOverLimitError) as caught:
        asyncio.run(run.invoke(plan, request=kit.request(response_schema=SCHEMA, token_budget=tight, counter=counter)))
    assert (caught.value.limit_name, caught.value.limit, caught.value.measured) == ("token_budget", tokens - 1, tokens)
    seen = counter.seen[-1]
    assert seen.system_prompt == "You are a careful reviewer."
    assert seen.metadata[RESPONSE_SCHEMA_KEY] == SCHEMA
    assert seen.messages[-1].metadata["images"] == [{"media_type": "image/png", "ref": "artifact:7"}]
    exact = TokenBudget(tokens + 30, output_reservation=20, safety_margin=10)
    asyncio.run(run.invoke(plan, request=kit.request(response_schema=SCHEMA, token_budget=exact, counter=counter)))
    assert client.inputs[0] is counter.seen[-1]
    with pytest.raises(PlanDefinitionError, match="counter"):
        kit.request(token_budget=exact)


def test_reports_are_never_a_release_credential_the_final_check_measures_again(kit) -> None:
    run, _, client = kit.make_run()
    plan = kit.plan_of(kit.history_fragment(2))
    result = asyncio.run(ContextProcessor(ContextPolicy()).process(run, plan, request=kit.request(max_input_chars=200)))
    assert result.report.within_budget is True
    swapped = attrs.evolve(result.input, messages=(*result.input.messages, Message.user("z" * 200)))
    with pytest.raises(PlanOverLimitError, match="max_input_chars"):
        asyncio.run(run.invoke(swapped, prepared=result.prepared))
    assert client.inputs == []


def test_handler_max_calls_defaults_to_one_and_zero_means_local_only(kit) -> None:
    class TwoCalls:
        id = "twice"

        async def compress(self, job, context):
            await context.call_model(ModelInput("s", (Message.user("a"),)))
            await context.call_model(ModelInput("s", (Message.user("b"),)))
            return dict(job.fragment.fields)

    step = CompressStep("c", "history", "twice", 10_000)
    run, _, client = kit.make_run()
    processor = ContextProcessor(ContextPolicy("reduce", (step,)), compressors=[TwoCalls()])
    with pytest.raises(HandlerCallLimitError, match="'twice' may make at most 1"):
        asyncio.run(processor.reduce(run, kit.plan_of(kit.history_fragment(2)), "c", request=kit.request()))
    assert len(client.inputs) == 1
    local = kit.SummaryCompressor(max_calls=0)
    step = CompressStep("s", "history", "summary", 10_000, Preserve("history", 1))
    processor = ContextProcessor(ContextPolicy("reduce", (step,)), compressors=[local])
    with pytest.raises(HandlerCallLimitError, match="at most 0"):
        asyncio.run(processor.reduce(run, kit.plan_of(kit.history_fragment(3)), "s", request=kit.request()))


def test_handler_calls_share_the_runs_quota_with_the_final_answer(kit) -> None:
    step = CompressStep("s", "history", "summary", 10_000, Preserve("history", 1))
    processor = ContextProcessor(ContextPolicy("reduce", (step,)), compressors=[kit.SummaryCompressor()])
    run, _, client = kit.make_run(max_model_calls=1)
    reduced = asyncio.run(processor.reduce(run, kit.plan_of(kit.history_fragment(3)), "s", request=kit.request()))
    assert run.quota.used == 1
    with pytest.raises(QuotaExhaustedError, match="1 of 1 used"):
        asyncio.run(run.invoke(reduced.plan, prepared=reduced.prepared))
    assert len(client.inputs) == 1


def test_auto_and_model_selection_reserve_a_call_for_the_final_answer(kit) -> None:
    step = CompressStep("s", "history", "summary", 10_000, Preserve("history", 1))
    policy = ContextPolicy("reduce", (step,), AutoSelection(), target_input_chars=10)
    processor = ContextProcessor(policy, compressors=[kit.SummaryCompressor()])
    plan = kit.plan_of(kit.history_fragment(3))
    starved, _, _ = kit.make_run(max_model_calls=1)
    assert asyncio.run(processor.select(starved, plan, request=kit.request())).step_ids == ()
    enough, _, _ = kit.make_run(max_model_calls=2)
    assert asyncio.run(processor.select(enough, plan, request=kit.request())).step_ids == ("s",)
    with pytest.raises(PlanDefinitionError, match="reserve_calls"):
        AutoSelection(reserve_calls=0)


def test_actual_calls_are_deducted_atomically() -> None:
    quota = ModelCallQuota(10)
    granted: list[int] = []
    barrier = threading.Barrier(40)

    def take() -> None:
        barrier.wait()
        try:
            quota.charge(1)
            granted.append(1)
        except QuotaExhaustedError:
            pass

    threads = [threading.Thread(target=take) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(granted) == 10
    assert quota.remaining == 0


def test_failed_calls_are_not_refunded(kit) -> None:
    step = CompressStep("s", "history", "summary", 10_000, Preserve("history", 1))
    processor = ContextProcessor(ContextPolicy("reduce", (step,)), compressors=[kit.SummaryCompressor()])
    run, _, _ = kit.make_run(kit.ScriptedClient(RuntimeError("provider down")), max_model_calls=3)
    with pytest.raises(RuntimeError, match="provider down"):
        asyncio.run(processor.reduce(run, kit.plan_of(kit.history_fragment(3)), "s", request=kit.request()))
    assert run.quota.used == 1


def test_fragment_max_chars_is_a_hard_limit(kit) -> None:
    fragment = ContextFragment("notes", "app", "data", {"n": "x" * 50}, max_chars=20)
    run, _, _ = kit.make_run()
    with pytest.raises(PlanOverLimitError, match=r"notes\.max_chars is 20"):
        asyncio.run(run.invoke(kit.plan_of(fragment, processing=()), request=kit.request()))
