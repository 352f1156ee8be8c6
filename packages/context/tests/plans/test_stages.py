"""Rule 3: select, reduce and process run alone or composed, reuse one preparation, and consume handles once."""

from __future__ import annotations

import asyncio

import pytest

from sciencediscovery.context.plans import (
    ContextPolicy,
    ContextProcessor,
    ContextRequest,
    PlanOverLimitError,
    PreparedHandleError,
    StepUnavailableError,
    TrimStep,
)


def _processor() -> ContextProcessor:
    return ContextProcessor(ContextPolicy("reduce", (TrimStep("window", "history", "history", 600),)))


def test_selection_returns_plan_handle_step_ids_and_report(kit) -> None:
    run, _, _ = kit.make_run()
    plan = kit.plan_of(kit.history_fragment(10))
    result = asyncio.run(_processor().select(run, plan, request=kit.request(max_input_chars=600)))
    assert result.plan is plan
    assert result.step_ids == ("window",)
    assert result.report.stage == "select"
    assert result.report.selected_step_ids == ("window",)
    assert not result.prepared.consumed


def test_reduction_runs_exactly_one_step_and_audits_it(kit) -> None:
    run, _, _ = kit.make_run()
    plan = kit.plan_of(kit.history_fragment(10))
    result = asyncio.run(_processor().reduce(run, plan, "window", request=kit.request()))
    assert result.report.executed_step_ids == ("window",)
    (change,) = result.report.changes
    assert change.fragment_id == "history"
    assert change.after_chars <= 600 < change.before_chars
    assert result.plan.fragment("history").chars == change.after_chars


def test_unknown_step_id_is_rejected(kit) -> None:
    run, _, _ = kit.make_run()
    with pytest.raises(StepUnavailableError, match="'nope'"):
        asyncio.run(_processor().reduce(run, kit.plan_of(kit.history_fragment(2)), "nope", request=kit.request()))


def test_processing_in_validate_mode_only_checks_and_assembles(kit) -> None:
    run, _, client = kit.make_run()
    plan = kit.plan_of(kit.history_fragment(3))
    processor = ContextProcessor(ContextPolicy())
    result = asyncio.run(processor.process(run, plan, request=kit.request()))
    assert result.plan is plan
    assert result.report.executed_step_ids == ()
    assert len(result.input.messages) == 6
    with pytest.raises(PlanOverLimitError):
        asyncio.run(processor.process(run, plan, request=kit.request(max_input_chars=10)))
    assert client.inputs == []


def test_stages_compose_in_the_applications_order_on_one_preparation(kit) -> None:
    run, _, client = kit.make_run()
    plan = kit.plan_of(kit.history_fragment(10))
    processor = _processor()

    async def main():
        selected = await processor.select(run, plan, request=kit.request(max_input_chars=600))
        reduced = await processor.reduce(run, selected.plan, selected.step_ids[0], prepared=selected.prepared)
        processed = await processor.process(run, reduced.plan, prepared=reduced.prepared)
        await run.invoke(processed.input, prepared=processed.prepared)
        return selected, reduced, processed

    selected, reduced, processed = asyncio.run(main())
    ids = {selected.prepared.preparation_id, reduced.prepared.preparation_id, processed.prepared.preparation_id}
    assert len(ids) == 1
    assert processed.report.executed_step_ids == ()  # the step already ran in the reduction stage
    assert client.inputs == [processed.input]


def test_a_prepared_handle_can_be_consumed_only_once(kit) -> None:
    run, _, _ = kit.make_run()
    plan = kit.plan_of(kit.history_fragment(2))
    processor = ContextProcessor(ContextPolicy())
    handle = run.prepare(kit.request())
    result = asyncio.run(processor.process(run, plan, prepared=handle))
    with pytest.raises(PreparedHandleError, match="already consumed"):
        asyncio.run(processor.process(run, plan, prepared=handle))
    asyncio.run(run.invoke(result.input, prepared=result.prepared))
    with pytest.raises(PreparedHandleError, match="already consumed"):
        asyncio.run(run.invoke(result.input, prepared=result.prepared))


def test_a_prepared_handle_belongs_to_one_request_and_one_run(kit) -> None:
    run, _, _ = kit.make_run()
    other_run, _, _ = kit.make_run()
    plan = kit.plan_of(kit.history_fragment(2))
    processor = ContextProcessor(ContextPolicy())
    handle = run.prepare(kit.request())
    with pytest.raises(PreparedHandleError, match="request 'other'"):
        asyncio.run(processor.process(run, plan, prepared=handle, request=ContextRequest("other", 1, 1)))
    with pytest.raises(PreparedHandleError, match="another run"):
        asyncio.run(processor.process(other_run, plan, prepared=run.prepare(kit.request())))
