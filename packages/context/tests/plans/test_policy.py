"""Rule 4: validate/reduce/audit modes, the four selections, triggers, soft targets and hard limits."""

from __future__ import annotations

import asyncio

import pytest

from sciencediscovery.context.plans import (
    AutoSelection,
    CompressStep,
    ContextFragment,
    ContextPlan,
    ContextPolicy,
    ContextProcessor,
    FixedSelection,
    ModelSelection,
    PlanDefinitionError,
    PlanOverLimitError,
    ProtectedFragmentError,
    SelectorError,
    StepUnavailableError,
    TrimStep,
    json_chars,
)
from sciencediscovery.runtime_core import Message, ModelInput, ToolSpec


def _local_summary(job):
    return {"history": [{"role": "user", "content": "Summary: earlier rounds."}]}


def _body(kit, rounds):
    return sum(len(e["content"]) for e in kit.entries(rounds))


def _process(kit, plan, processor, max_input_chars=10_000, **run_kwargs):
    run, sink, client = kit.make_run(**run_kwargs)
    result = asyncio.run(processor.process(run, plan, request=kit.request(max_input_chars=max_input_chars)))
    return result, run, sink


def test_validate_mode_runs_no_reduction() -> None:
    with pytest.raises(PlanDefinitionError, match="steps"):
        ContextPolicy("validate", (TrimStep("t", "history", "history", 10),))


def test_sequence_runs_steps_in_order_until_the_limit_is_met(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    steps = (TrimStep("first", "history", "history", 700), TrimStep("second", "history", "history", 200))
    result, _, _ = _process(kit, plan, ContextProcessor(ContextPolicy("reduce", steps)), max_input_chars=600)
    assert result.report.executed_step_ids == ("first",)


def test_fixed_selection_restricts_to_one_step_kind(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    compressor = kit.FunctionCompressor(_local_summary)
    steps = (TrimStep("trim", "history", "history", 300), CompressStep("squeeze", "history", "local", 300))
    policy = ContextPolicy("reduce", steps, FixedSelection("compress"))
    result, _, _ = _process(kit, plan, ContextProcessor(policy, compressors=[compressor]), max_input_chars=300)
    assert result.report.executed_step_ids == ("squeeze",)
    with pytest.raises(PlanDefinitionError, match="step_kind"):
        FixedSelection("delete")


def test_auto_prefers_a_safe_trim_under_the_loss_ratio(kit) -> None:
    assert AutoSelection().max_trim_loss_ratio == 0.25
    plan = kit.plan_of(kit.history_fragment(10))
    size = plan.fragment("history").chars
    compressor = kit.FunctionCompressor(_local_summary)
    steps = (CompressStep("squeeze", "history", "local", 100), TrimStep("trim", "history", "history", size - 1))
    policy = ContextPolicy("reduce", steps, AutoSelection(), target_input_chars=_body(kit, 10) - 1)
    result, _, _ = _process(kit, plan, ContextProcessor(policy, compressors=[compressor]))
    assert result.report.executed_step_ids == ("trim",)
    assert compressor.calls == 0


def test_auto_otherwise_chooses_an_affordable_compression(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    size = plan.fragment("history").chars
    compressor = kit.FunctionCompressor(_local_summary)
    steps = (TrimStep("trim", "history", "history", size // 2), CompressStep("squeeze", "history", "local", 100))
    policy = ContextPolicy("reduce", steps, AutoSelection(), target_input_chars=_body(kit, 10) - 1)
    result, _, _ = _process(kit, plan, ContextProcessor(policy, compressors=[compressor]))
    assert result.report.executed_step_ids == ("squeeze",)


def test_multiple_trims_of_one_fragment_accumulate_against_the_ratio(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    size = plan.fragment("history").chars
    steps = (
        TrimStep("trim-a", "history", "history", int(size * 0.85)),
        TrimStep("trim-b", "history", "history", int(size * 0.70)),
    )
    policy = ContextPolicy("reduce", steps, AutoSelection(), target_input_chars=1)
    run, _, _ = kit.make_run()
    processor = ContextProcessor(policy)

    async def main():
        first = await processor.select(run, plan, request=kit.request())
        reduced = await processor.reduce(run, plan, first.step_ids[0], prepared=first.prepared)
        second = await processor.select(run, reduced.plan, prepared=reduced.prepared)
        return first, reduced, second

    first, reduced, second = asyncio.run(main())
    assert first.step_ids == ("trim-a",)
    # alone trim-b would lose under 25% of the current size, accumulated it would exceed 25% of the original
    current = reduced.plan.fragment("history").chars
    assert (current - int(size * 0.70)) / current < 0.25
    assert second.step_ids == ()
    assert second.report.notes == ("no safe step",)


def test_model_selector_returns_a_step_id_that_runs(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    steps = (TrimStep("keep-3", "history", "history", 400), TrimStep("keep-1", "history", "history", 150))
    selector = kit.FunctionSelector(lambda job: job.candidates[-1].step_id)
    policy = ContextPolicy("reduce", steps, ModelSelection("picker"), target_input_chars=400)
    processor = ContextProcessor(policy, selectors=[selector])
    result, _, _ = _process(kit, plan, processor)
    assert result.report.executed_step_ids == ("keep-1",)
    assert [c.step_id for c in selector.jobs[0].candidates] == ["keep-3", "keep-1"]


@pytest.mark.parametrize(
    "answer",
    ["delete-everything", {"step_id": "trim", "budget": 99}, {"tools": ["shell"]}, None],
)
def test_model_selector_cannot_add_steps_handlers_tools_or_budget(kit, answer) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    selector = kit.FunctionSelector(lambda job: answer)
    policy = ContextPolicy("reduce", (TrimStep("trim", "history", "history", 200),), ModelSelection("picker"))
    run, _, _ = kit.make_run()
    with pytest.raises(SelectorError, match="'picker'"):
        asyncio.run(ContextProcessor(policy, selectors=[selector]).process(run, plan, request=kit.request(300)))


def test_model_selector_cannot_declare_tools_in_its_model_request(kit) -> None:
    class ToolGrabber:
        id = "picker"
        max_calls = 1

        async def select(self, job, context):
            tools = (ToolSpec("shell"),)
            await context.call_model(ModelInput("pick", (Message.user("?"),), tools))
            return job.candidates[0].step_id

    plan = kit.plan_of(kit.history_fragment(10))
    policy = ContextPolicy("reduce", (TrimStep("trim", "history", "history", 200),), ModelSelection("picker"))
    run, _, client = kit.make_run()
    with pytest.raises(SelectorError, match="cannot add tools"):
        asyncio.run(ContextProcessor(policy, selectors=[ToolGrabber()]).process(run, plan, request=kit.request(300)))
    assert client.inputs == []


def test_empty_selection_still_rejects_a_final_over_limit(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    size = plan.fragment("history").chars
    policy = ContextPolicy("reduce", (TrimStep("big-cut", "history", "history", size // 3),), AutoSelection())
    run, sink, _ = kit.make_run()
    with pytest.raises(PlanOverLimitError, match="max_input_chars"):
        asyncio.run(ContextProcessor(policy).process(run, plan, request=kit.request(max_input_chars=size // 3)))
    names = [e.name for e in sink.of_kind("context_stage_transition")]
    assert "no_safe_step" in names
    assert sink.of_kind("context_stage_completed") == []


def test_trigger_watermark_starts_processing_before_the_hard_limit(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    body = asyncio.run(ContextProcessor(ContextPolicy()).process(kit.make_run()[0], plan, request=kit.request()))
    chars = body.report.after.body_chars
    trim = TrimStep("window", "history", "history", 500)
    under, _, _ = _process(kit, plan, ContextProcessor(ContextPolicy("reduce", (trim,), trigger_chars=chars)))
    over, _, _ = _process(kit, plan, ContextProcessor(ContextPolicy("reduce", (trim,), trigger_chars=chars - 1)))
    assert under.report.executed_step_ids == ()
    assert over.report.executed_step_ids == ("window",)


def test_missing_a_soft_target_while_meeting_the_hard_limit_continues(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    policy = ContextPolicy("reduce", (TrimStep("window", "history", "history", 600),), target_input_chars=10)
    result, _, sink = _process(kit, plan, ContextProcessor(policy))
    assert result.report.soft_target_met is False
    assert result.report.after.body_chars > 10
    assert result.report.notes == ("soft target missed; hard limits met",)


def test_exceeding_the_hard_limit_after_processing_is_rejected(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    policy = ContextPolicy("reduce", (TrimStep("window", "history", "history", 600),))
    run, _, client = kit.make_run()
    with pytest.raises(PlanOverLimitError, match="max_input_chars is 50"):
        asyncio.run(ContextProcessor(policy).process(run, plan, request=kit.request(max_input_chars=50)))
    assert client.inputs == []


def test_each_step_runs_at_most_once(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    compressor = kit.FunctionCompressor(_local_summary)
    policy = ContextPolicy("reduce", (CompressStep("squeeze", "history", "local", 10_000),), target_input_chars=1)
    processor = ContextProcessor(policy, compressors=[compressor])
    run, _, _ = kit.make_run()

    async def main():
        reduced = await processor.reduce(run, plan, "squeeze", request=kit.request())
        processed = await processor.process(run, reduced.plan, prepared=reduced.prepared)
        return reduced, processed

    reduced, processed = asyncio.run(main())
    assert compressor.calls == 1
    assert processed.report.executed_step_ids == ()
    handle = run.prepare(kit.request())
    again = asyncio.run(processor.reduce(run, plan, "squeeze", prepared=handle))
    with pytest.raises(StepUnavailableError, match="already ran"):
        asyncio.run(processor.reduce(run, again.plan, "squeeze", prepared=again.prepared))


def test_trims_use_the_full_json_length_and_never_cut_a_message(kit) -> None:
    fragment = ContextFragment(
        "history", "chat", "history", {"topic": "TP53", "history": kit.entries(10)}, max_chars=None
    )
    plan = ContextPlan((fragment,), processing_ids=("history",))
    target = 400
    result = asyncio.run(
        ContextProcessor(ContextPolicy("reduce", (TrimStep("w", "history", "history", target),))).reduce(
            kit.make_run()[0], plan, "w", request=kit.request()
        )
    )
    after = result.plan.fragment("history")
    assert json_chars(dict(after.fields)) == after.chars <= target
    kept = after.fields["history"]
    original = kit.entries(10)
    assert kept == original[len(original) - len(kept) :]
    assert kept[0]["role"] == "user"
    # one more group would not have fitted: the trim dropped no more than needed
    longer = original[len(original) - len(kept) - 2 :]
    assert json_chars({"topic": "TP53", "history": longer}) > target


def test_audit_mode_lets_only_mutable_fragment_ids_change(kit) -> None:
    original_history = kit.history_fragment(4)
    notes = ContextFragment("notes", "app", "data", {"n": "keep me"})
    edited = original_history.with_fields({"history": kit.entries(4)[-2:]})
    allowed = ContextPlan(
        (edited, notes),
        processing_ids=("history", "notes"),
        original_fragments=(original_history, notes),
        mutable_fragment_ids=("history",),
    )
    run, _, _ = kit.make_run()
    result = asyncio.run(ContextProcessor(ContextPolicy("audit")).process(run, allowed, request=kit.request()))
    assert [c.fragment_id for c in result.report.changes] == ["history"]
    forbidden = ContextPlan(
        (original_history, notes.with_fields({"n": "x"})),
        processing_ids=("history", "notes"),
        original_fragments=(original_history, notes),
        mutable_fragment_ids=("history",),
    )
    with pytest.raises(ProtectedFragmentError, match="'notes'.*immutable"):
        asyncio.run(ContextProcessor(ContextPolicy("audit")).process(run, forbidden, request=kit.request()))


class CharCounter:
    """One token per character of message content."""

    def count(self, model_input: ModelInput) -> int:
        return sum(len(message.content) for message in model_input.messages)


def test_token_trigger_and_target_use_the_requests_counter(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(10))
    tokens = _body(kit, 10)
    trim = TrimStep("window", "history", "history", 500)
    processor = ContextProcessor(ContextPolicy("reduce", (trim,), trigger_tokens=tokens - 1))
    run, _, _ = kit.make_run()
    result = asyncio.run(processor.process(run, plan, request=kit.request(counter=CharCounter())))
    assert result.report.executed_step_ids == ("window",)
    assert result.report.after.tokens < tokens
    with pytest.raises(PlanDefinitionError, match="trigger_tokens"):
        asyncio.run(processor.process(run, plan, request=kit.request()))


def test_a_model_selector_is_not_called_when_it_would_eat_the_reserved_call(kit) -> None:
    with pytest.raises(PlanDefinitionError, match="reserve_calls"):
        ModelSelection("picker", reserve_calls=0)
    selector = kit.FunctionSelector(lambda job: job.candidates[0].step_id, max_calls=1)
    policy = ContextPolicy("reduce", (TrimStep("t", "history", "history", 100),), ModelSelection("picker"))
    run, _, _ = kit.make_run(max_model_calls=1)
    result = asyncio.run(
        ContextProcessor(policy, selectors=[selector]).select(
            run, kit.plan_of(kit.history_fragment(5)), request=kit.request()
        )
    )
    assert result.step_ids == ()
    assert selector.jobs == []
