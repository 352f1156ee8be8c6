"""Rule 5: grouping for processing and raw-text retention in compress steps."""

from __future__ import annotations

import asyncio

import pytest

from sciencediscovery.context.grouping import FixedGrouping, IsolatedOpeningError, NonTextEntryError, UnknownRoleError
from sciencediscovery.context.plans import (
    CompressStep,
    ContextFragment,
    ContextPlan,
    ContextPolicy,
    ContextProcessor,
    Preserve,
    PreservedTailTooLargeError,
    ReductionError,
    TrimStep,
)


def _compress(kit, plan, compressor, *, keep=2, target=10_000, grouping=None):
    preserve = Preserve("history", keep) if grouping is None else Preserve("history", keep, grouping)
    step = CompressStep("summary", "history", compressor.id, target, preserve)
    run, _, client = kit.make_run(kit.ScriptedClient("the early rounds discussed TP53"))
    processor = ContextProcessor(ContextPolicy("reduce", (step,)), compressors=[compressor])
    return asyncio.run(processor.reduce(run, plan, "summary", request=kit.request())), client


def test_the_handler_receives_only_the_old_segment_and_the_tail_is_stitched_back_unchanged(kit) -> None:
    compressor = kit.SummaryCompressor()
    history = kit.entries(5, unanswered=True)
    plan = kit.plan_of(ContextFragment("history", "chat", "history", {"history": history}))
    result, client = _compress(kit, plan, compressor, keep=2)
    (job,) = compressor.jobs
    assert job.fragment.fields["history"] == history[:8]  # four old rounds; the last round + open question kept
    assert result.plan.fragment("history").fields["history"] == [
        {"role": "user", "content": "Summary: the early rounds discussed TP53"},
        *history[8:],
    ]
    assert "q4" not in client.inputs[0].messages[0].content


def test_fixed_groups_are_preserved_whole(kit) -> None:
    compressor = kit.SummaryCompressor()
    history = kit.entries(4)
    plan = kit.plan_of(ContextFragment("history", "chat", "history", {"history": history}))
    result, _ = _compress(kit, plan, compressor, keep=1, grouping=FixedGrouping(4))
    assert compressor.jobs[0].fragment.fields["history"] == history[:4]
    assert result.plan.fragment("history").fields["history"][1:] == history[4:]


def test_a_preserved_tail_over_the_limit_is_rejected_not_deleted(kit) -> None:
    compressor = kit.SummaryCompressor()
    plan = kit.plan_of(kit.history_fragment(5))
    with pytest.raises(PreservedTailTooLargeError, match="last 3 group"):
        _compress(kit, plan, compressor, keep=3, target=200)
    assert compressor.jobs == []


def test_with_no_old_segment_the_summarizer_is_not_called(kit) -> None:
    compressor = kit.SummaryCompressor()
    plan = kit.plan_of(kit.history_fragment(2))
    result, client = _compress(kit, plan, compressor, keep=2)
    assert compressor.jobs == []
    assert client.inputs == []
    assert result.plan == plan
    assert result.report.changes == ()


def test_a_compressor_result_must_keep_fields_and_legitimate_grouping(kit) -> None:
    plan = kit.plan_of(kit.history_fragment(4))
    dropped_field = kit.FunctionCompressor(lambda job: {"other": []})
    with pytest.raises(ReductionError, match="must return the fields"):
        _compress(kit, plan, dropped_field, keep=1)
    opens_with_assistant = kit.FunctionCompressor(lambda job: {"history": [{"role": "assistant", "content": "s"}]})
    with pytest.raises(ReductionError, match="grouping"):
        _compress(kit, plan, opens_with_assistant, keep=1)


@pytest.mark.parametrize(
    ("bad_history", "error"),
    [
        ([{"role": "assistant", "content": "hello"}, {"role": "user", "content": "q"}], IsolatedOpeningError),
        ([{"role": "user", "content": "q"}, {"role": "critic", "content": "c"}], UnknownRoleError),
        ([{"role": "user", "content": [{"type": "image", "ref": "a"}]}], NonTextEntryError),
    ],
)
def test_isolated_openings_unknown_roles_and_non_text_entries_are_rejected_for_processing(
    kit, bad_history, error
) -> None:
    plan = ContextPlan(
        (ContextFragment("history", "chat", "history", {"history": bad_history}),), processing_ids=("history",)
    )
    processor = ContextProcessor(ContextPolicy("reduce", (TrimStep("w", "history", "history", 10),)))
    run, _, _ = kit.make_run()
    with pytest.raises(error, match=r"history\.history"):
        asyncio.run(processor.reduce(run, plan, "w", request=kit.request()))
